// Command bench measures the virtualservice-operator at scale on a local control plane (internal/testkit/devcluster):
// N production Services x M developer namespaces, every developer Service with a ready EndpointSlice. The operator
// runs as its real binary, out of process, so its memory is its own. It reports the time until every VirtualService
// has its final routes, writes per VirtualService (seen on a watch and counted by the operator), reconciles per
// second, peak RSS, and the same after a ConfigMap edit that renames the header and drops a namespace.
//
//	go run ./tests/virtualservice/bench --out _output/bench/virtualservice.json
package main

import (
	"context"
	"flag"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
)

type options struct {
	services, namespaces int
	out                  string
	qps                  float64
	burst                int
	workers              int
	batchWindow          time.Duration
	timeout              time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.services, "services", 500, "production Services")
	flag.IntVar(&o.namespaces, "namespaces", 10, "developer namespaces, each with a ready Service per production Service")
	flag.StringVar(&o.out, "out", "_output/bench/virtualservice.json", "results file (JSON)")
	flag.Float64Var(&o.qps, "operator-qps", 50, "the operator's --kube-api-qps (the chart's default)")
	flag.IntVar(&o.burst, "operator-burst", 100, "the operator's --kube-api-burst (the chart's default)")
	flag.IntVar(&o.workers, "operator-workers", 4, "the operator's --max-concurrent-reconciles (the chart's default)")
	flag.DurationVar(&o.batchWindow, "operator-batch-window", time.Second, "the operator's --batch-window (the chart's default); 0 turns batching off")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "give up after this long")
	flag.Parse()

	bench.Main("bench", o.out, o.timeout, func(ctx context.Context) (*results, error) { return run(ctx, o) })
}
