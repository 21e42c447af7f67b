// Command bench measures the apps-ingress-operator at scale on two local control planes
// (internal/testkit/devcluster): N AppsIngress objects pointing at one hosted cluster with different Service names,
// MetalLB's real controller assigning their IPs, the operator running as its real binary (out of process, so its
// memory is its own), and the real CoreDNS and HAProxy serving the rendered ConfigMaps. Per cluster, while the burst
// runs, it reports the time from the external IP being assigned (seen on a watch of the hosted Service) to the
// ConfigMaps holding it, to CoreDNS answering it from the VLAN view, to HAProxy routing a TLS connection to it and to
// the AppsIngress Ready; then the same for IP changes one at a time, the full re-render time and the operator's peak
// memory.
//
//	go run ./tests/appsingress/bench --out _output/bench/appsingress.json
package main

import (
	"context"
	"flag"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
)

type options struct {
	clusters int
	changes  int
	out      string
	timeout  time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.clusters, "clusters", 2000, "AppsIngress objects (their Services share one hosted cluster)")
	flag.IntVar(&o.changes, "changes", 20, "IP changes measured one at a time once every cluster is Ready")
	flag.StringVar(&o.out, "out", "_output/bench/appsingress.json", "results file (JSON)")
	flag.DurationVar(&o.timeout, "timeout", 45*time.Minute, "give up after this long")
	flag.Parse()

	bench.Main("bench", o.out, o.timeout, func(ctx context.Context) (*results, error) { return run(ctx, o) })
}
