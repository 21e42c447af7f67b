// Command traffic measures what a tenant Service recreation costs the requests going through virtual-ingress's
// generated Ingress and HTTPRoute: a real ingress controller (Traefik, tests/virtualingress/traffic) on a local
// cluster with a node, the chart installed with `helm install --wait` (its status controller as the chart's Pod), echo
// Pods as the tenant's backends, and a client sending --rate requests a second to the controller only while the
// Service is replaced under a new name, --recreations times per case, for each policy engine and each kind. It needs
// root on Linux (the node); `make bench` runs it there.
//
//	go run ./tests/virtualingress/bench/traffic [--engines clusterPolicy,generatingPolicy] [--recreations 20]
//	    [--repairs 5] [--rate 50] [--out _output/bench/virtualingress-traffic.json] [--dir .devcluster/bench-traffic]
//	go run ./tests/virtualingress/bench/traffic --from _output/bench/virtualingress-traffic.json   (the table only)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	benchkit "github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualingress/traffic"
)

const chart = "virtual-ingress"

type options struct {
	engines, out, dir, from string
	recreations, repairs    int
	rate                    int
	timeout, repairTimeout  time.Duration
}

type bench struct {
	cluster *devcluster.Cluster
	kube    kubernetes.Interface
	dyn     dynamic.Interface
	client  *traffic.Client
	rate    int
	timeout time.Duration
	// skipped is how many update requests Kyverno's log said it had skipped when a recreation through a repair began.
	skipped int
}

func main() {
	var o options
	flag.StringVar(&o.engines, "engines", strings.Join(policyengine.All, ","), "policy engines (chart value policy.engine) to measure, one after the other")
	flag.IntVar(&o.recreations, "recreations", 20, "Service recreations per engine, kind and case")
	flag.IntVar(&o.repairs, "repairs", 5, "recreations through a status-controller repair per engine and kind (each waits for the controller's --repair-after, 30s)")
	flag.IntVar(&o.rate, "rate", 50, "requests a second the client sends to the controller")
	flag.DurationVar(&o.timeout, "timeout", time.Minute, "how long a recreation may take to reach the new backend")
	flag.DurationVar(&o.repairTimeout, "repair-timeout", 3*time.Minute, "how long a recreation through a repair may take")
	flag.StringVar(&o.out, "out", "_output/bench/virtualingress-traffic.json", "where to write the results as JSON")
	flag.StringVar(&o.dir, "dir", "", "devcluster directory (default .devcluster/bench-traffic in the repository)")
	flag.StringVar(&o.from, "from", "", "print the table of an earlier run's JSON results instead of measuring")
	flag.Parse()
	if o.from != "" {
		if err := printFrom(o.from); err != nil {
			fmt.Fprintln(os.Stderr, "bench traffic:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "bench traffic:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if err := devcluster.NodeAvailable(); err != nil {
		return fmt.Errorf("needs a node (root on Linux with containerd): %w", err)
	}
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	root, err := repo.Root()
	if err != nil {
		return err
	}
	if o.dir == "" {
		o.dir = filepath.Join(root, ".devcluster", "bench-traffic")
	}
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: o.dir, WithKyverno: true, WithNode: true, Timeout: 5 * time.Minute})
	if err != nil {
		return err
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "bench traffic: stopping the cluster:", err)
		}
	}()
	if err := cluster.ApplyGatewayAPICRDs(ctx); err != nil {
		return err
	}
	imageValues, err := cluster.BuildChartImage(ctx, root, chart, "controller.image", "./cmd/virtual-ingress-controller")
	if err != nil {
		return err
	}
	release, err := helmrelease.ForRepoChart(cluster.Kubeconfig(), root, chart)
	if err != nil {
		return err
	}
	controller, err := traffic.Start(ctx, cluster, o.dir, os.Stderr)
	if err != nil {
		return err
	}
	defer func() { _ = controller.Stop() }()

	cfg := cluster.RESTConfig()
	b := &bench{cluster: cluster, kube: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg),
		client: traffic.NewClient(controller.HTTP), rate: o.rate}
	res := results{Rate: o.rate, Machine: fmt.Sprintf("%d cores", runtime.NumCPU()), Engines: map[string]map[string]map[string][]outcome{}}
	for i, engine := range strings.Split(o.engines, ",") {
		values := nodetier.Merge(imageValues, map[string]any{"policy": map[string]any{"engine": engine}})
		install := release.InstallWait
		if i > 0 {
			install = release.UpgradeWait
		}
		if err := install(ctx, values, nodetier.InstallTimeout); err != nil {
			return fmt.Errorf("helm install/upgrade --wait with %s: %w", engine, err)
		}
		if err := cluster.WaitPoliciesReady(ctx, "app.kubernetes.io/part-of="+chart); err != nil {
			return err
		}
		if err := virtualingress.WaitAdmissionReady(ctx, b.dyn, time.Minute); err != nil {
			return err
		}
		if res.Engines[engine], err = b.measureEngine(ctx, engine, o); err != nil {
			return fmt.Errorf("%s: %w\ntraefik:\n%s", engine, err, controller.Logs())
		}
	}
	res.print(os.Stdout)
	return benchkit.WriteJSON(o.out, res)
}

func printFrom(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var res results
	if err := json.Unmarshal(data, &res); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	res.print(os.Stdout)
	return nil
}

// measureEngine runs every case for both kinds in a namespace of its own, with echo Pods "a" and "b".
func (b *bench) measureEngine(ctx context.Context, engine string, o options) (map[string]map[string][]outcome, error) {
	ns := "traffic-" + strings.ToLower(engine)
	if _, err := b.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	for _, backend := range []string{"a", "b"} {
		if err := traffic.RunBackend(ctx, b.kube, ns, backend); err != nil {
			return nil, err
		}
	}
	out := map[string]map[string][]outcome{}
	for _, kind := range kinds {
		s, cur, err := b.newSubject(ctx, ns, kind)
		if err != nil {
			return nil, err
		}
		out[kind] = map[string][]outcome{}
		for _, c := range cases {
			n, timeout := o.recreations, o.timeout
			if c == throughRepair {
				n, timeout = o.repairs, o.repairTimeout
			}
			b.timeout = timeout
			for i := range n {
				oc, err := b.recreate(ctx, s, c, &cur)
				if err != nil {
					return nil, fmt.Errorf("%s %s recreation %d: %w", kind, c, i+1, err)
				}
				out[kind][c] = append(out[kind][c], oc)
				fmt.Fprintf(os.Stderr, "%s %s %s %d/%d: %d of %d failed, gap %s, generated %s, endpoints %s, served %s\n",
					engine, kind, c, i+1, n, oc.Failed, oc.Sent, ms(oc.Gap), ms(oc.Generated), ms(oc.Endpoints), ms(oc.Served))
			}
		}
	}
	return out, nil
}
