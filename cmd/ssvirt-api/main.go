// Command ssvirt-api is a Cloud Director-style self-service API (CloudAPI 1.0.0 shapes) with an embedded
// Kubernetes client: each VDC is a namespace with a quota and a network policy, catalog items are OpenShift
// Templates, and vApps are TemplateInstances. One process: database, HTTP API and reconcilers.
package main

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

type flags struct {
	manager                      managerflags.Flags
	listen, dbDriver, sqlitePath string
	jwtKeyFile                   string
	sessionLifetime              time.Duration
	bootstrapAdmin               string
	kube                         kube.Options
}

func parseFlags() flags {
	var f flags
	flag.StringVar(&f.listen, "listen-address", ":8080", "address of the HTTP API")
	flag.StringVar(&f.dbDriver, "database-driver", store.DriverSQLite, "sqlite (embedded, a file) or postgres (connection string in $SSVIRT_DATABASE_URL)")
	flag.StringVar(&f.sqlitePath, "sqlite-path", "ssvirt.db", "SQLite database file, with --database-driver=sqlite")
	flag.StringVar(&f.jwtKeyFile, "jwt-key-file", "", "file holding the session signing key (at least 32 bytes); required, or $SSVIRT_JWT_KEY")
	flag.DurationVar(&f.sessionLifetime, "session-lifetime", 8*time.Hour, "how long a session token is valid")
	flag.StringVar(&f.bootstrapAdmin, "bootstrap-admin", "admin", "name of the system administrator created at first start when there is none; its password comes from $SSVIRT_BOOTSTRAP_ADMIN_PASSWORD")
	flag.StringVar(&f.kube.TemplateNamespace, "template-namespace", "openshift", "namespace whose Templates are the catalog items")
	flag.DurationVar(&f.kube.ResyncPeriod, "resync-period", time.Minute, "how often every VDC is compared with its namespace without an event")
	flag.DurationVar(&f.kube.PowerTimeout, "power-timeout", 10*time.Minute, "how long a power action waits for the VM's status before its task ends in error")
	f.manager.Register(flag.CommandLine, 50, 100)
	flag.Parse()
	return f
}

func main() {
	if err := run(parseFlags()); err != nil {
		fmt.Fprintln(os.Stderr, "ssvirt-api:", err)
		os.Exit(1)
	}
}

func run(f flags) error {
	if err := f.manager.SetupLogger(); err != nil {
		return err
	}
	key := []byte(os.Getenv("SSVIRT_JWT_KEY"))
	if f.jwtKeyFile != "" {
		data, err := os.ReadFile(f.jwtKeyFile)
		if err != nil {
			return fmt.Errorf("--jwt-key-file: %w", err)
		}
		key = bytes.TrimSpace(data)
	}
	if len(key) == 0 {
		return fmt.Errorf("no session signing key: set --jwt-key-file or $SSVIRT_JWT_KEY (there is no default)")
	}
	dsn := f.sqlitePath
	if f.dbDriver == store.DriverPostgres {
		if dsn = os.Getenv("SSVIRT_DATABASE_URL"); dsn == "" {
			return fmt.Errorf("--database-driver=postgres needs $SSVIRT_DATABASE_URL")
		}
	}
	cfg, err := f.manager.RESTConfig("ssvirt-api")
	if err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	a, err := app.Start(ctx, app.Config{
		ListenAddress: f.listen, DatabaseDriver: f.dbDriver, DatabaseDSN: dsn,
		JWTKey: key, SessionLifetime: f.sessionLifetime,
		BootstrapAdmin: f.bootstrapAdmin, BootstrapPass: os.Getenv("SSVIRT_BOOTSTRAP_ADMIN_PASSWORD"),
		Kube: f.kube, RESTConfig: cfg,
		Manager: f.manager.ManagerOptions("ssvirt-api", os.Getenv("POD_NAMESPACE")),
		Log:     ctrl.Log.WithName("ssvirt-api"),
	})
	if err != nil {
		return err
	}
	ctrl.Log.Info("serving", "address", a.Addr)
	return a.Wait()
}
