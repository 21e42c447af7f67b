// Command virtualservice-operator keeps one Istio VirtualService per Service of a production namespace, with a
// header-matched route to each developer namespace that runs a ready Service of the same name. Configuration comes
// from a ConfigMap (key config.yaml) that is watched; see internal/config and the README.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/virtual-ingress/virtual-ingress/internal/platform/metricsserver"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/controller"
)

type flags struct {
	configMapName, configMapNamespace string
	istioAPIVersion                   string
	metricsAddr, probeAddr            string
	leaderElect, metricsSecure        bool
	leaderElectionID                  string
	maxConcurrentReconciles           int
	batchWindow                       time.Duration
	qps                               float64
	burst                             int
	logLevel, logFormat               string
}

func parseFlags() flags {
	var f flags
	flag.StringVar(&f.configMapName, "config-map", "virtualservice-operator-config", "name of the ConfigMap holding config.yaml")
	flag.StringVar(&f.configMapNamespace, "config-map-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the ConfigMap and of the leader election Lease (default: $POD_NAMESPACE)")
	flag.StringVar(&f.istioAPIVersion, "istio-api-version", "v1", "networking.istio.io version to read and write: v1 (Istio 1.22+), v1beta1 or v1alpha3")
	flag.StringVar(&f.metricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint (/metrics); 0 disables it")
	flag.BoolVar(&f.metricsSecure, "metrics-secure", true, "serve metrics over HTTPS to callers the API server authenticates and authorises for GET /metrics; false serves plain HTTP to anyone")
	flag.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	flag.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader through a Lease, for more than one replica")
	flag.StringVar(&f.leaderElectionID, "leader-election-id", "virtualservice-operator", "name of the leader election Lease")
	flag.IntVar(&f.maxConcurrentReconciles, "max-concurrent-reconciles", 4, "production Services reconciled in parallel")
	flag.DurationVar(&f.batchWindow, "batch-window", controller.DefaultBatchWindow, "how long a production Service's reconcile waits after a watch event, so that the events within it cost one write; 0 reconciles at once")
	flag.Float64Var(&f.qps, "kube-api-qps", 50, "client-side limit of API requests per second")
	flag.IntVar(&f.burst, "kube-api-burst", 100, "client-side burst of API requests")
	flag.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info or error")
	flag.StringVar(&f.logFormat, "log-format", "json", "log format: json or console")
	flag.Parse()
	return f
}

func main() {
	if err := run(parseFlags()); err != nil {
		fmt.Fprintln(os.Stderr, "virtualservice-operator:", err)
		os.Exit(1)
	}
}

func run(f flags) error {
	level, err := zapcore.ParseLevel(f.logLevel)
	if err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if f.logFormat != "json" && f.logFormat != "console" {
		return fmt.Errorf("--log-format %q: want json or console", f.logFormat)
	}
	ctrl.SetLogger(zap.New(zap.Level(level), zap.UseDevMode(f.logFormat == "console")))
	if f.batchWindow < 0 {
		return fmt.Errorf("--batch-window %s: want 0 or more", f.batchWindow)
	}
	if f.configMapNamespace == "" {
		return fmt.Errorf("--config-map-namespace is required when POD_NAMESPACE is not set")
	}
	cm := types.NamespacedName{Namespace: f.configMapNamespace, Name: f.configMapName}

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(f.qps), f.burst
	cfg.UserAgent = "virtualservice-operator"
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:                   controller.ManagerCacheOptions(cm),
		Metrics:                 metricsserver.Options(f.metricsAddr, f.metricsSecure),
		HealthProbeBindAddress:  f.probeAddr,
		LeaderElection:          f.leaderElect,
		LeaderElectionID:        f.leaderElectionID,
		LeaderElectionNamespace: cm.Namespace,
		// The new leader can start at once when the old one shuts down cleanly (rolling updates).
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return err
	}
	if _, err := controller.Setup(mgr, controller.Options{
		ConfigMap:               cm,
		IstioAPIVersion:         f.istioAPIVersion,
		MaxConcurrentReconciles: f.maxConcurrentReconciles,
		BatchWindow:             batchWindow(f.batchWindow),
	}); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// batchWindow maps the flag, where 0 means no batching, to controller.Options, where 0 means the default.
func batchWindow(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
