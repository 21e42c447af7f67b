package controller

import (
	"flag"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/platform/flagvalue"
)

// DefaultNameSuffix is the chart's default generatedIngress.nameSuffix: the Ingress (HTTPRoute) generated from a
// VirtualIngress (VirtualHTTPRoute) is named <name><suffix>.
const DefaultNameSuffix = "-generated"

// BindFlags registers the options as command-line flags. The chart's Deployment passes each one from its values; the
// tests that run the controller in-process parse the same arguments from the rendered chart.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.KyvernoNamespace, "kyverno-namespace", "kyverno", "namespace of Kyverno's UpdateRequests")
	fs.StringVar(&o.NameSuffix, "name-suffix", DefaultNameSuffix, "the chart's generatedIngress.nameSuffix")
	fs.Func("excluded-labels", "the chart's generatedIngress.excludedLabels (comma-separated): labels of a source its generated object does not get",
		flagvalue.CommaList(&o.ExcludedLabels))
	fs.Func("excluded-annotations", "the chart's generatedIngress.excludedAnnotations (comma-separated)",
		flagvalue.CommaList(&o.ExcludedAnnotations))
	fs.StringVar(&o.OnMultipleMatches, "on-multiple-matches", OnMultipleMatchesError, "the chart's serviceDiscovery.onMultipleMatches: error or oldest")
	fs.DurationVar(&o.Grace, "grace", 5*time.Second, "how long a missing or outdated Ingress goes unreported while Kyverno generates it; a resolved VirtualIngress still missing its first Ingress, with nothing pending in Kyverno, is written again then")
	fs.DurationVar(&o.PendingGrace, "pending-grace", 5*time.Minute, "how long a VirtualIngress with no Ready condition yet goes unreported while Kyverno holds a request to generate its Ingress")
	fs.DurationVar(&o.RepairAfter, "repair-after", 30*time.Second, "how long a divergence lasts, with nothing pending in Kyverno, before the VirtualIngress is written again")
	fs.DurationVar(&o.LagRepairAfter, "lag-repair-after", time.Second, "how long a resolution behind the Services, toward a Service that appeared, lasts with nothing pending in Kyverno before the VirtualIngress is written again")
	fs.DurationVar(&o.MaxRepairBackoff, "max-repair-backoff", 10*time.Minute, "longest wait between two repairs of one VirtualIngress")
	fs.IntVar(&o.UpdateRequestThreshold, "kyverno-update-request-threshold", 1000, "Kyverno's updateRequestThreshold: repairs wait while nine tenths of it exist")
	fs.DurationVar(&o.Resync, "resync", 10*time.Minute, "re-check every VirtualIngress this often without events")
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", 2, "objects of each kind checked in parallel")
	fs.BoolVar(&o.Routes, "routes", false, "check VirtualHTTPRoutes too (the cluster must serve Gateway API's HTTPRoute)")
}
