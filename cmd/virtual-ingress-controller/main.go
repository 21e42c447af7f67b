// Command virtual-ingress-controller is virtual-ingress's status controller: it checks the Ingresses (HTTPRoutes)
// Kyverno generates from VirtualIngresses (VirtualHTTPRoutes), sets each one's Ready condition from the generated
// object's real state, and repairs what Kyverno dropped. See internal/virtualingress/controller and the chart's README.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/virtual-ingress/virtual-ingress/internal/platform/managerflags"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/controller"
)

type flags struct {
	manager                 managerflags.Flags
	opts                    controller.Options
	leaderElectionNamespace string
}

func parseFlags() flags {
	var f flags
	f.opts.BindFlags(flag.CommandLine)
	f.manager.Register(flag.CommandLine, 20, 40)
	flag.StringVar(&f.leaderElectionNamespace, "leader-election-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the leader election Lease (default: $POD_NAMESPACE)")
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
	if err := f.manager.SetupLogger(); err != nil {
		return err
	}
	cfg, err := f.manager.RESTConfig("virtual-ingress-controller")
	if err != nil {
		return err
	}
	opts := f.manager.ManagerOptions("virtual-ingress-controller", f.leaderElectionNamespace)
	opts.Cache = controller.CacheOptions(f.opts.KyvernoNamespace)
	opts.Client = controller.ClientOptions()
	mgr, err := ctrl.NewManager(cfg, opts)
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
