// Command virtualservice-operator keeps one Istio VirtualService per Service of a production namespace, with a
// header-matched route to each developer namespace that runs a ready Service of the same name. Configuration comes
// from a ConfigMap (key config.yaml) that is watched; see internal/config and the README.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/options"
)

func main() {
	var o options.Options
	o.BindFlags(flag.CommandLine)
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "virtualservice-operator:", err)
		os.Exit(1)
	}
}

func run(o options.Options) error {
	if err := o.Manager.SetupLogger(); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	cfg, err := o.Manager.RESTConfig("virtualservice-operator")
	if err != nil {
		return err
	}
	opts := o.Manager.ManagerOptions(o.LeaderElectionID, o.ConfigMap.Namespace)
	opts.Cache = controller.ManagerCacheOptions(o.ConfigMap)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	if _, err := controller.Setup(mgr, o.Controller()); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
