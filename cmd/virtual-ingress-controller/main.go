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

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/options"
)

func main() {
	var o options.Options
	o.BindFlags(flag.CommandLine)
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "virtual-ingress-controller:", err)
		os.Exit(1)
	}
}

func run(o options.Options) error {
	if err := o.Manager.SetupLogger(); err != nil {
		return err
	}
	cfg, err := o.Manager.RESTConfig("virtual-ingress-controller")
	if err != nil {
		return err
	}
	opts := o.Manager.ManagerOptions("virtual-ingress-controller", o.LeaderElectionNamespace)
	opts.Cache = controller.CacheOptions(o.Controller.KyvernoNamespace)
	opts.Client = controller.ClientOptions()
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	if err := controller.Setup(mgr, o.Controller); err != nil {
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
