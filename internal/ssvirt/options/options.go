// Package options holds the ssvirt-api binary's options: its command-line flags, owned here so that the tests parse
// the chart's rendered arguments with the very flags the binary has, and the app.Config they complete into.
package options

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/virtual-ingress/virtual-ingress/internal/platform/managerflags"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/app"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Options are ssvirt-api's command-line settings. The chart's Deployment passes them from its values; its render test
// parses the rendered arguments with BindFlags, so that a flag the chart passes and the binary lacks fails there.
type Options struct {
	Manager                                               managerflags.Flags
	ListenAddress, DatabaseDriver, SQLitePath, JWTKeyFile string
	SessionLifetime                                       time.Duration
	BootstrapAdmin                                        string
	Kube                                                  kube.Options
	// Lease timings of the leader election: a survivor leads about LeaseDuration after the leader died.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// BindFlags registers the flags on fs.
func (f *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.ListenAddress, "listen-address", ":8080", "address of the HTTP API")
	fs.StringVar(&f.DatabaseDriver, "database-driver", store.DriverSQLite, "sqlite (embedded, a file) or postgres (connection string in $SSVIRT_DATABASE_URL)")
	fs.StringVar(&f.SQLitePath, "sqlite-path", "ssvirt.db", "SQLite database file, with --database-driver=sqlite")
	fs.StringVar(&f.JWTKeyFile, "jwt-key-file", "", "file holding the session signing key (at least 32 bytes); required, or $SSVIRT_JWT_KEY")
	fs.DurationVar(&f.SessionLifetime, "session-lifetime", 8*time.Hour, "how long a session token is valid")
	fs.StringVar(&f.BootstrapAdmin, "bootstrap-admin", "admin", "name of the system administrator created at first start when there is none; its password comes from $SSVIRT_BOOTSTRAP_ADMIN_PASSWORD")
	fs.StringVar(&f.Kube.TemplateNamespace, "template-namespace", "openshift", "namespace whose Templates are the catalog items")
	fs.DurationVar(&f.Kube.ResyncPeriod, "resync-period", time.Minute, "how often every VDC is compared with its namespace without an event")
	fs.DurationVar(&f.Kube.PowerTimeout, "power-timeout", 10*time.Minute, "how long a power action waits for the VM's status before its task ends in error")
	fs.DurationVar(&f.Kube.InstantiateTimeout, "instantiate-timeout", 30*time.Second, "how long an instantiation request may take to create its TemplateInstance; a vApp without one twice that long after is taken for one a stopped process left, removed, and its task ended in error")
	fs.StringVar(&f.Kube.Region, "region-name", "kubernetes", "name of the one region (the Kubernetes cluster ssvirt-api runs against) in the Tenant Manager's API; its id derives from it, so keep it across restarts")
	// Failover within 5 seconds: the survivor takes a dead leader's Lease at most a retry period after it
	// expires (client-go counts the duration in whole seconds). A leader that cannot renew for the renew deadline
	// stops leading, and the process exits to be restarted.
	fs.DurationVar(&f.LeaseDuration, "leader-election-lease-duration", 3*time.Second, "how long a dead leader's Lease keeps the other replicas waiting (whole seconds)")
	fs.DurationVar(&f.RenewDeadline, "leader-election-renew-deadline", 2*time.Second, "how long the leader keeps trying to renew its Lease before it stops leading")
	fs.DurationVar(&f.RetryPeriod, "leader-election-retry-period", 500*time.Millisecond, "how often the leader renews its Lease and the others try to take it")
	f.Manager.Register(fs, 50, 100)
}

// Config completes the flags with what comes from the environment (the signing key, the database's connection
// string, the bootstrap password, the Lease's namespace) and the Kubernetes client configuration.
func (f Options) Config() (app.Config, error) {
	key := []byte(os.Getenv("SSVIRT_JWT_KEY"))
	if f.JWTKeyFile != "" {
		data, err := os.ReadFile(f.JWTKeyFile)
		if err != nil {
			return app.Config{}, fmt.Errorf("--jwt-key-file: %w", err)
		}
		key = bytes.TrimSpace(data)
	}
	if len(key) == 0 {
		return app.Config{}, fmt.Errorf("no session signing key: set --jwt-key-file or $SSVIRT_JWT_KEY (there is no default)")
	}
	dsn := f.SQLitePath
	if f.DatabaseDriver == store.DriverPostgres {
		if dsn = os.Getenv("SSVIRT_DATABASE_URL"); dsn == "" {
			return app.Config{}, fmt.Errorf("--database-driver=postgres needs $SSVIRT_DATABASE_URL")
		}
	}
	rest, err := f.Manager.RESTConfig("ssvirt-api")
	if err != nil {
		return app.Config{}, err
	}
	if f.LeaseDuration.Truncate(time.Second) != f.LeaseDuration || f.LeaseDuration <= f.RenewDeadline ||
		f.RenewDeadline <= f.RetryPeriod*6/5 || f.RetryPeriod <= 0 {
		return app.Config{}, fmt.Errorf("leader election: want a lease duration in whole seconds > renew deadline > 1.2 x retry period > 0, got %s, %s, %s",
			f.LeaseDuration, f.RenewDeadline, f.RetryPeriod)
	}
	mgr := f.Manager.ManagerOptions("ssvirt-api", os.Getenv("POD_NAMESPACE"))
	mgr.LeaseDuration, mgr.RenewDeadline, mgr.RetryPeriod = &f.LeaseDuration, &f.RenewDeadline, &f.RetryPeriod
	return app.Config{
		ListenAddress: f.ListenAddress, DatabaseDriver: f.DatabaseDriver, DatabaseDSN: dsn,
		JWTKey: key, SessionLifetime: f.SessionLifetime,
		BootstrapAdmin: f.BootstrapAdmin, BootstrapPass: os.Getenv("SSVIRT_BOOTSTRAP_ADMIN_PASSWORD"),
		Kube: f.Kube, RESTConfig: rest,
		Manager: mgr,
		Log:     ctrl.Log.WithName("ssvirt-api"),
	}, nil
}
