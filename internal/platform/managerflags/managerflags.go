// Package managerflags holds the command-line flags every controller binary of this repository shares (metrics,
// probes, leader election, API client limits, logging) and turns them into controller-runtime settings.
package managerflags

import (
	"flag"
	"fmt"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/virtual-ingress/virtual-ingress/internal/platform/metricsserver"
)

// Flags are the shared flags' values.
type Flags struct {
	MetricsAddr, ProbeAddr     string
	MetricsSecure, LeaderElect bool
	QPS                        float64
	Burst                      int
	LogLevel, LogFormat        string
}

// Register adds the shared flags to fs; qps and burst are the binary's default API client limits.
func (f *Flags) Register(fs *flag.FlagSet, qps float64, burst int) {
	fs.StringVar(&f.MetricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint (/metrics); 0 disables it")
	fs.BoolVar(&f.MetricsSecure, "metrics-secure", true, "serve metrics over HTTPS to callers the API server authenticates and authorises for GET /metrics; false serves plain HTTP to anyone")
	fs.StringVar(&f.ProbeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.BoolVar(&f.LeaderElect, "leader-elect", false, "elect a leader through a Lease, for more than one replica")
	fs.Float64Var(&f.QPS, "kube-api-qps", qps, "client-side limit of API requests per second")
	fs.IntVar(&f.Burst, "kube-api-burst", burst, "client-side burst of API requests")
	fs.StringVar(&f.LogLevel, "log-level", "info", "log level: debug, info or error")
	fs.StringVar(&f.LogFormat, "log-format", "json", "log format: json or console")
}

// SetupLogger checks the logging flags and installs controller-runtime's logger.
func (f Flags) SetupLogger() error {
	level, err := zapcore.ParseLevel(f.LogLevel)
	if err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if f.LogFormat != "json" && f.LogFormat != "console" {
		return fmt.Errorf("--log-format %q: want json or console", f.LogFormat)
	}
	ctrl.SetLogger(zap.New(zap.Level(level), zap.UseDevMode(f.LogFormat == "console")))
	return nil
}

// RESTConfig is the in-cluster (or kubeconfig) client configuration with the flags' limits and userAgent.
func (f Flags) RESTConfig(userAgent string) (*rest.Config, error) {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = float32(f.QPS), f.Burst
	cfg.UserAgent = userAgent
	return cfg, nil
}

// ManagerOptions are the manager settings the flags decide; the caller adds its cache and client options.
func (f Flags) ManagerOptions(leaderElectionID, leaderElectionNamespace string) ctrl.Options {
	return ctrl.Options{
		Metrics:                 metricsserver.Options(f.MetricsAddr, f.MetricsSecure),
		HealthProbeBindAddress:  f.ProbeAddr,
		LeaderElection:          f.LeaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: leaderElectionNamespace,
		// The new leader can start at once when the old one shuts down cleanly (rolling updates).
		LeaderElectionReleaseOnCancel: true,
	}
}
