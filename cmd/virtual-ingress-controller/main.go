// Command virtual-ingress-controller is virtual-ingress's status controller: it checks the Ingresses Kyverno generates
// from VirtualIngresses, sets each VirtualIngress's Ready condition from the Ingress's real state, and repairs what
// Kyverno dropped. See internal/virtualingress/controller and the chart's README.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/virtual-ingress/virtual-ingress/internal/platform/metricsserver"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/controller"
)

type flags struct {
	opts                    controller.Options
	metricsAddr, probeAddr  string
	leaderElect, secure     bool
	leaderElectionNamespace string
	qps                     float64
	burst                   int
	logLevel, logFormat     string
}

func parseFlags() flags {
	var f flags
	flag.StringVar(&f.opts.KyvernoNamespace, "kyverno-namespace", "kyverno", "namespace of Kyverno's UpdateRequests")
	flag.StringVar(&f.opts.NameSuffix, "name-suffix", "-generated", "the chart's generatedIngress.nameSuffix")
	flag.StringVar(&f.opts.OnMultipleMatches, "on-multiple-matches", "error", "the chart's serviceDiscovery.onMultipleMatches: error or oldest")
	flag.DurationVar(&f.opts.Grace, "grace", 5*time.Second, "how long a missing or outdated Ingress goes unreported while Kyverno generates it")
	flag.DurationVar(&f.opts.RepairAfter, "repair-after", 30*time.Second, "how long a divergence lasts, with nothing pending in Kyverno, before the VirtualIngress is written again")
	flag.DurationVar(&f.opts.MaxRepairBackoff, "max-repair-backoff", 10*time.Minute, "longest wait between two repairs of one VirtualIngress")
	flag.DurationVar(&f.opts.Resync, "resync", 10*time.Minute, "re-check every VirtualIngress this often without events")
	flag.IntVar(&f.opts.MaxConcurrentReconciles, "max-concurrent-reconciles", 2, "VirtualIngresses checked in parallel")
	flag.StringVar(&f.metricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint (/metrics); 0 disables it")
	flag.BoolVar(&f.secure, "metrics-secure", true, "serve metrics over HTTPS to callers the API server authenticates and authorises for GET /metrics; false serves plain HTTP to anyone")
	flag.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	flag.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader through a Lease, for more than one replica")
	flag.StringVar(&f.leaderElectionNamespace, "leader-election-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the leader election Lease (default: $POD_NAMESPACE)")
	flag.Float64Var(&f.qps, "kube-api-qps", 20, "client-side limit of API requests per second")
	flag.IntVar(&f.burst, "kube-api-burst", 40, "client-side burst of API requests")
	flag.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info or error")
	flag.StringVar(&f.logFormat, "log-format", "json", "log format: json or console")
	flag.Parse()
	return f
}

func main() {
	if err := run(parseFlags()); err != nil {
		fmt.Fprintln(os.Stderr, "virtual-ingress-controller:", err)
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
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(f.qps), f.burst
	cfg.UserAgent = "virtual-ingress-controller"
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:                         controller.CacheOptions(f.opts.KyvernoNamespace),
		Client:                        controller.ClientOptions(),
		Metrics:                       metricsserver.Options(f.metricsAddr, f.secure),
		HealthProbeBindAddress:        f.probeAddr,
		LeaderElection:                f.leaderElect,
		LeaderElectionID:              "virtual-ingress-controller",
		LeaderElectionNamespace:       f.leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return err
	}
	if err := controller.Setup(mgr, f.opts); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
