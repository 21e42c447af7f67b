// Command virtual-ingress-controller is virtual-ingress's status controller: it checks the Ingresses (HTTPRoutes)
// Kyverno generates from VirtualIngresses (VirtualHTTPRoutes), sets each one's Ready condition from the generated
// object's real state, and repairs what Kyverno dropped. See internal/virtualingress/controller and the chart's README.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

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
	flag.StringVar(&f.opts.KyvernoNamespace, "kyverno-namespace", "kyverno", "namespace of Kyverno's UpdateRequests")
	flag.StringVar(&f.opts.NameSuffix, "name-suffix", "-generated", "the chart's generatedIngress.nameSuffix")
	flag.Func("excluded-labels", "the chart's generatedIngress.excludedLabels (comma-separated): labels of a source its generated object does not get", keys(&f.opts.ExcludedLabels))
	flag.Func("excluded-annotations", "the chart's generatedIngress.excludedAnnotations (comma-separated)", keys(&f.opts.ExcludedAnnotations))
	flag.StringVar(&f.opts.OnMultipleMatches, "on-multiple-matches", "error", "the chart's serviceDiscovery.onMultipleMatches: error or oldest")
	flag.DurationVar(&f.opts.Grace, "grace", 5*time.Second, "how long a missing or outdated Ingress goes unreported while Kyverno generates it")
	flag.DurationVar(&f.opts.PendingGrace, "pending-grace", 5*time.Minute, "how long a VirtualIngress with no Ready condition yet goes unreported while Kyverno holds a request to generate its Ingress")
	flag.DurationVar(&f.opts.RepairAfter, "repair-after", 30*time.Second, "how long a divergence lasts, with nothing pending in Kyverno, before the VirtualIngress is written again")
	flag.DurationVar(&f.opts.MaxRepairBackoff, "max-repair-backoff", 10*time.Minute, "longest wait between two repairs of one VirtualIngress")
	flag.IntVar(&f.opts.UpdateRequestThreshold, "kyverno-update-request-threshold", 1000, "Kyverno's updateRequestThreshold: repairs wait while nine tenths of it exist")
	flag.DurationVar(&f.opts.Resync, "resync", 10*time.Minute, "re-check every VirtualIngress this often without events")
	flag.IntVar(&f.opts.MaxConcurrentReconciles, "max-concurrent-reconciles", 2, "objects of each kind checked in parallel")
	flag.BoolVar(&f.opts.Routes, "routes", false, "check VirtualHTTPRoutes too (the cluster must serve Gateway API's HTTPRoute)")
	f.manager.Register(flag.CommandLine, 20, 40)
	flag.StringVar(&f.leaderElectionNamespace, "leader-election-namespace", os.Getenv("POD_NAMESPACE"), "namespace of the leader election Lease (default: $POD_NAMESPACE)")
	flag.Parse()
	return f
}

// keys parses a comma-separated list of label or annotation keys into dst.
func keys(dst *[]string) func(string) error {
	return func(value string) error {
		*dst = controller.SplitKeys(value)
		return nil
	}
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
