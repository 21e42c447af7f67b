// Package options holds the virtualservice-operator binary's options: its command-line flags, owned here so that
// the tests parse the chart's rendered arguments with the very flags the binary has, and what they turn into.
package options

import (
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/platform/managerflags"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/controller"
)

// Options are the operator's flags' values.
type Options struct {
	Manager managerflags.Flags
	// ConfigMap holds config.yaml; its namespace also holds the leader election Lease.
	ConfigMap               types.NamespacedName
	IstioAPIVersion         string
	LeaderElectionID        string
	MaxConcurrentReconciles int
	// BatchWindow is the flag's value, where 0 means no batching.
	BatchWindow time.Duration
}

// BindFlags registers every flag of the operator (the shared manager flags included) on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.ConfigMap.Name, "config-map", "virtualservice-operator-config", "name of the ConfigMap holding config.yaml")
	fs.StringVar(&o.ConfigMap.Namespace, "config-map-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the ConfigMap and of the leader election Lease (default: $POD_NAMESPACE)")
	fs.StringVar(&o.IstioAPIVersion, "istio-api-version", "v1", "networking.istio.io version to read and write: v1 (Istio 1.22+), v1beta1 or v1alpha3")
	o.Manager.Register(fs, 50, 100)
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", "virtualservice-operator", "name of the leader election Lease")
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", 4, "production Services reconciled in parallel")
	fs.DurationVar(&o.BatchWindow, "batch-window", controller.DefaultBatchWindow, "how long a production Service's reconcile waits after a watch event, so that the events within it cost one write; 0 reconciles at once")
}

// Validate fails on options the operator cannot run with, naming the flag.
func (o Options) Validate() error {
	if o.BatchWindow < 0 {
		return fmt.Errorf("--batch-window %s: want 0 or more", o.BatchWindow)
	}
	if o.ConfigMap.Namespace == "" {
		return fmt.Errorf("--config-map-namespace is required when POD_NAMESPACE is not set")
	}
	return nil
}

// Controller is what the options ask of the controller.
func (o Options) Controller() controller.Options {
	// The flag's 0 is no batching; controller.Options' is the default.
	window := o.BatchWindow
	if window == 0 {
		window = -1
	}
	return controller.Options{
		ConfigMap:               o.ConfigMap,
		IstioAPIVersion:         o.IstioAPIVersion,
		MaxConcurrentReconciles: o.MaxConcurrentReconciles,
		BatchWindow:             window,
	}
}
