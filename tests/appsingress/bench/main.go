// Command bench measures the apps-ingress-operator at scale on two local control planes
// (internal/testkit/devcluster): N AppsIngress objects pointing at one hosted cluster with different Service names,
// MetalLB's real controller assigning their IPs, the operator running as its real binary (out of process, so its
// memory is its own), and the real CoreDNS and HAProxy serving the rendered ConfigMaps. Per cluster it reports the
// time from the external IP being assigned (seen on a watch of the hosted Service) to the ConfigMaps holding it, to
// CoreDNS answering it from the VLAN view, and to HAProxy routing a TLS connection to it; then the full re-render
// time and the operator's peak memory.
//
//	go run ./tests/appsingress/bench --out _output/bench/appsingress.json
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	res, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if err := res.write(o.out); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	res.print(os.Stdout)
	fmt.Println("results written to", o.out)
}
