// Command virtualservice-operator keeps one Istio VirtualService per Service of a production namespace, with a
// header-matched route to each developer namespace that runs a ready Service of the same name. Configuration comes
// from a ConfigMap (key config.yaml) that is watched; see internal/config and the README.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/virtual-ingress/virtual-ingress/internal/platform/managerflags"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/controller"
)

type flags struct {
	manager                           managerflags.Flags
	configMapName, configMapNamespace string
	istioAPIVersion                   string
	leaderElectionID                  string
	maxConcurrentReconciles           int
	batchWindow                       time.Duration
}

func parseFlags() flags {
	var f flags
	flag.StringVar(&f.configMapName, "config-map", "virtualservice-operator-config", "name of the ConfigMap holding config.yaml")
	flag.StringVar(&f.configMapNamespace, "config-map-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the ConfigMap and of the leader election Lease (default: $POD_NAMESPACE)")
	flag.StringVar(&f.istioAPIVersion, "istio-api-version", "v1", "networking.istio.io version to read and write: v1 (Istio 1.22+), v1beta1 or v1alpha3")
	f.manager.Register(flag.CommandLine, 50, 100)
	flag.StringVar(&f.leaderElectionID, "leader-election-id", "virtualservice-operator", "name of the leader election Lease")
	flag.IntVar(&f.maxConcurrentReconciles, "max-concurrent-reconciles", 4, "production Services reconciled in parallel")
	flag.DurationVar(&f.batchWindow, "batch-window", controller.DefaultBatchWindow, "how long a production Service's reconcile waits after a watch event, so that the events within it cost one write; 0 reconciles at once")
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
	if err := f.manager.SetupLogger(); err != nil {
		return err
	}
	if f.batchWindow < 0 {
		return fmt.Errorf("--batch-window %s: want 0 or more", f.batchWindow)
	}
	if f.configMapNamespace == "" {
		return fmt.Errorf("--config-map-namespace is required when POD_NAMESPACE is not set")
	}
	cm := types.NamespacedName{Namespace: f.configMapNamespace, Name: f.configMapName}

	cfg, err := f.manager.RESTConfig("virtualservice-operator")
	if err != nil {
		return err
	}
	opts := f.manager.ManagerOptions(f.leaderElectionID, cm.Namespace)
	opts.Cache = controller.ManagerCacheOptions(cm)
	mgr, err := ctrl.NewManager(cfg, opts)
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
