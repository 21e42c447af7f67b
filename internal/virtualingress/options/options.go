// Package options holds the virtual-ingress-controller binary's options: its command-line flags, owned here so that
// the tests parse the chart's rendered arguments with the very flags the binary has.
package options

import (
	"flag"
	"os"

	"github.com/virtual-ingress/virtual-ingress/internal/platform/managerflags"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/controller"
)

// Options are the status controller's flags' values.
type Options struct {
	Manager    managerflags.Flags
	Controller controller.Options
	// LeaderElectionNamespace holds the leader election Lease.
	LeaderElectionNamespace string
}

// BindFlags registers every flag of the binary (the shared manager flags included) on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	o.Controller.BindFlags(fs)
	o.Manager.Register(fs, 20, 40)
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the leader election Lease (default: $POD_NAMESPACE)")
}
