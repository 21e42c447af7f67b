// Command ssvirt-api is a Cloud Director-style self-service API (CloudAPI 1.0.0 shapes) with an embedded
// Kubernetes client: each VDC is a namespace with a quota and a network policy, catalog items are OpenShift
// Templates, and vApps are TemplateInstances. One process: database, HTTP API and reconcilers.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/app"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/options"
)

func main() {
	var f options.Options
	f.BindFlags(flag.CommandLine)
	flag.Parse()
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "ssvirt-api:", err)
		os.Exit(1)
	}
}

func run(f options.Options) error {
	if err := f.Manager.SetupLogger(); err != nil {
		return err
	}
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	a, err := app.Start(ctrl.SetupSignalHandler(), cfg)
	if err != nil {
		return err
	}
	ctrl.Log.Info("serving", "address", a.Addr)
	return a.Wait()
}
