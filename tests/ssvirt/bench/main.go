// Command bench measures ssvirt-api end to end on a local control plane (internal/testkit/devcluster), the same
// workload on SQLite and then on PostgreSQL (tests/ssvirt/pgserver), a row each: the real binary runs out of
// process, so its memory is its own. It reports VDC creates per second
// (each one a namespace, quota and policy before the answer), catalog item list latency with many Templates
// in the cache, instantiation latency (the TemplateInstance exists when the answer comes), and the process RSS
// with the cache warm.
//
//	go run ./tests/ssvirt/bench --out _output/bench/ssvirt.json
package main

import (
	"context"
	"flag"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
)

type options struct {
	templates, vdcs, concurrency, lists, instantiations int
	out                                                 string
	timeout                                             time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.templates, "templates", 500, "catalog Templates in the template namespace")
	flag.IntVar(&o.vdcs, "vdcs", 200, "VDCs created")
	flag.IntVar(&o.concurrency, "concurrency", 8, "concurrent VDC creates")
	flag.IntVar(&o.lists, "lists", 300, "catalog item list requests (pageSize 128)")
	flag.IntVar(&o.instantiations, "instantiations", 100, "instantiations")
	flag.StringVar(&o.out, "out", "_output/bench/ssvirt.json", "results file (JSON)")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "give up after this long")
	flag.Parse()
	bench.Main("bench", o.out, o.timeout, func(ctx context.Context) (report, error) { return run(ctx, o) })
}
