// Command apps-ingress-operator reconciles AppsIngress objects: for each hosted cluster a LoadBalancer Service in
// that cluster (through its HostedCluster's kubeconfig), and its entries in the CoreDNS and HAProxy ConfigMaps that
// give *.apps.<cluster>.<baseDomain> and api.<cluster>.<baseDomain> split-horizon DNS and TLS-passthrough routes.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/options"
)

func main() {
	if len(os.Args) > 1 {
		if sub, ok := subcommands[os.Args[1]]; ok {
			if err := sub(os.Args[2:]); err != nil {
				fmt.Fprintln(os.Stderr, "apps-ingress-operator "+os.Args[1]+":", err)
				os.Exit(1)
			}
			return
		}
	}
	var o options.Options
	o.BindFlags(flag.CommandLine)
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "apps-ingress-operator:", err)
		os.Exit(1)
	}
}

// subcommands are the operator image's other programs, run in the CoreDNS and HAProxy Pods.
var subcommands = map[string]func(args []string) error{
	"sync-files":        syncFiles,
	"check-attachments": checkAttachments,
}

func run(o options.Options) error {
	if err := o.Manager.SetupLogger(); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	cfg, err := o.Manager.RESTConfig("apps-ingress-operator")
	if err != nil {
		return err
	}
	opts := o.Manager.ManagerOptions(o.LeaderElectionID, o.Namespace)
	opts.Scheme = scheme
	opts.Cache = controller.CacheOptions(o.Namespace, o.SecretNamespaces)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	copts, err := o.Controller(mgr.GetCache())
	if err != nil {
		return err
	}
	if _, err := controller.Setup(mgr, copts); err != nil {
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
