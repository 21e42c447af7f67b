// Command bench measures the virtual-ingress policies on a real control plane with Kyverno (internal/devcluster):
// how long a VirtualIngress takes to get its Ingress, how long an Ingress takes to follow a recreated Service, and
// how 1,000 VirtualIngresses over 1,000 Services converge. It prints a table and writes the figures as JSON.
//
//	go run ./tools/bench [--creates 200] [--recreates 100] [--scale 1000] [--out _output/bench/results.json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/virtual-ingress/virtual-ingress/internal/devcluster"
)

type options struct {
	creates, recreates, scale, burst int
	out, dir                         string
	timeout                          time.Duration
}

// bench holds the clients every measurement uses.
type bench struct {
	cluster *devcluster.Cluster
	kube    kubernetes.Interface
	dyn     dynamic.Interface
	timeout time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.creates, "creates", 200, "VirtualIngresses created one after the other for the create latency")
	flag.IntVar(&o.recreates, "recreates", 100, "Service recreations for the recreate latency")
	flag.IntVar(&o.scale, "scale", 1000, "VirtualIngresses (and Services) in one namespace for the scale run; 0 skips it")
	flag.IntVar(&o.burst, "burst", 100, "Services recreated at once in the scale run's second phase")
	flag.StringVar(&o.out, "out", "_output/bench/results.json", "where to write the results as JSON")
	flag.StringVar(&o.dir, "dir", "", "devcluster directory (default .devcluster/bench in the repository)")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long one measurement may wait for convergence")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	// Kyverno answers every ClusterPolicy write with two expected warnings (kyverno.io/v1 is deprecated; status is
	// patched without a status subresource, which this CRD does not have); see the README.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	ctx := context.Background()
	root, err := devcluster.FindRepoRoot()
	if err != nil {
		return err
	}
	if o.dir == "" {
		o.dir = filepath.Join(root, ".devcluster", "bench")
	}
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: o.dir, WithKyverno: true, Timeout: 5 * time.Minute})
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }()

	cfg := cluster.RESTConfig()
	// The scale run creates thousands of objects; client-side throttling would measure the client, not Kyverno.
	cfg.QPS, cfg.Burst = 500, 1000
	b := &bench{cluster: cluster, kube: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg), timeout: o.timeout}

	if _, err := cluster.InstallRepoChart(ctx, root, "virtual-ingress"); err != nil {
		return err
	}

	results := results{Environment: environment()}
	fmt.Printf("create latency: %d VirtualIngresses, one at a time\n", o.creates)
	if results.Create, err = b.createLatency(ctx, o.creates); err != nil {
		return err
	}
	fmt.Printf("recreate latency: %d Service recreations\n", o.recreates)
	if results.Recreate, err = b.recreateLatency(ctx, o.recreates); err != nil {
		return err
	}
	if o.scale > 0 {
		fmt.Printf("scale: %d VirtualIngresses over %d Services in one namespace\n", o.scale, o.scale)
		if results.Scale, err = b.scaleRun(ctx, o.scale, min(o.burst, o.scale)); err != nil {
			return err
		}
	}
	results.print(os.Stdout)
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	fmt.Println("results written to", o.out)
	return os.WriteFile(o.out, append(data, '\n'), 0o644)
}
