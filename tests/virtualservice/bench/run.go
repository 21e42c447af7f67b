package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualservice/fixture"
)

const (
	prodNS     = "bench-prod"
	operatorNS = "vso-bench"
	configName = "virtualservice-operator-config"
)

func devNS(i int) string { return fmt.Sprintf("bench-dev-%02d", i) }

func run(ctx context.Context, o options) (*results, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "virtualservice-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: filepath.Join(dir, "cluster")})
	if err != nil {
		return nil, err
	}
	defer func() { _ = cluster.Stop() }()
	cfg := cluster.RESTConfig()
	cfg.QPS, cfg.Burst = 1000, 2000 // the fixture load is not what is measured
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if err := fixture.InstallCRD(ctx, cfg, root); err != nil {
		return nil, err
	}
	namespaces := []string{prodNS, operatorNS}
	var devs []string
	for i := range o.namespaces {
		devs = append(devs, devNS(i))
	}
	if err := fixture.CreateNamespaces(ctx, kube, append(namespaces, devs...)...); err != nil {
		return nil, err
	}
	begin := time.Now()
	if err := createServices(ctx, kube, o, devs); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "bench: %d Services and %d EndpointSlices created in %s\n",
		o.services*(1+o.namespaces), o.services*o.namespaces, time.Since(begin).Round(time.Second))
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: configName},
		Data:       map[string]string{"config.yaml": configText(devs, "x-developer")},
	}
	if _, err := kube.CoreV1().ConfigMaps(operatorNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return nil, err
	}

	w, err := startWatch(ctx, cfg, o.services)
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "virtualservice-operator")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/virtualservice-operator").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the operator: %w: %s", err, out)
	}
	res := &results{Services: o.services, DeveloperNamespaces: o.namespaces, OperatorQPS: o.qps, OperatorWorkers: o.workers}
	// Phase 1: from the operator's start until every VirtualService has every developer route.
	var op *operatorProcess
	want := routeState{routes: o.namespaces + 1, header: "x-developer"}
	res.Create, err = measure(ctx, w, &lazyOperator{&op}, want, time.Time{}, func() error {
		op, err = startOperator(ctx, bin, cluster.Kubeconfig(), filepath.Join(dir, "operator.log"), o)
		return err
	})
	if op != nil {
		defer op.stop()
	}
	if err != nil {
		return nil, fmt.Errorf("%w (operator log: %s)", err, filepath.Join(dir, "operator.log"))
	}
	// Phase 2: the header renamed and one developer namespace dropped, in one ConfigMap edit.
	want = routeState{routes: o.namespaces, header: "x-dev"}
	res.ConfigEdit, err = measure(ctx, w, &lazyOperator{&op}, want, time.Time{}, func() error {
		cm.Data["config.yaml"] = configText(devs[1:], "x-dev")
		_, err := kube.CoreV1().ConfigMaps(operatorNS).Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%w (operator log: %s)", err, op.logFile)
	}
	res.PeakRSSMiB = op.peakRSSMiB()
	return res, nil
}

func configText(devs []string, header string) string {
	return fmt.Sprintf("defaultNamespace: %s\ndeveloperNamespaces: [%s]\nheaderName: %s\n", prodNS, strings.Join(devs, ", "), header)
}

// createServices creates the developer Services (each with a ready EndpointSlice) before the production ones, as a
// running system would have them; 32 requests in flight.
func createServices(ctx context.Context, kube kubernetes.Interface, o options, devs []string) error {
	jobs := make(chan func() error)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range jobs {
				if err := job(); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	send := func(ns string) {
		for i := range o.services {
			svc := fixture.Service(ns, fmt.Sprintf("svc-%03d", i), fixture.Port("http", 8080))
			jobs <- func() error {
				if ns == prodNS {
					_, err := kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
					return err
				}
				_, err := fixture.ReadyService(ctx, kube, svc)
				return err
			}
		}
	}
	for _, d := range devs {
		send(d)
	}
	send(prodNS)
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}
