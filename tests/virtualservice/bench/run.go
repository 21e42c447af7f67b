package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kubeobj"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualservice/fixture"
)

const (
	prodNS     = "bench-prod"
	operatorNS = "vso-bench"
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
	if err := kubeobj.CreateNamespaces(ctx, kube, append(namespaces, devs...)...); err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: fixture.OperatorConfigMap},
		Data:       map[string]string{"config.yaml": fixture.ConfigText(prodNS, devs, "x-developer")},
	}
	if _, err := kube.CoreV1().ConfigMaps(operatorNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return nil, err
	}

	w, err := startWatch(ctx, cfg, o.services)
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "virtualservice-operator")
	if err := repo.BuildCommand(ctx, "virtualservice-operator", bin); err != nil {
		return nil, err
	}
	res := &results{Services: o.services, DeveloperNamespaces: o.namespaces, OperatorQPS: o.qps, OperatorWorkers: o.workers,
		OperatorBatchWindow: o.batchWindow.Seconds(), Relabelled: min(20, o.services)}
	want := routeState{routes: o.namespaces + 1, header: "x-developer"}

	// Phase 1: the operator runs while every Service is created, as the reference operator was measured: until every
	// VirtualService has every developer route, and how long after the last create.
	runningLog := filepath.Join(dir, "operator-running.log")
	first, err := startOperator(ctx, bin, cluster.Kubeconfig(), runningLog, o)
	if err != nil {
		return nil, err
	}
	if err := first.waitServing(ctx); err != nil {
		first.stop()
		return nil, fmt.Errorf("%w (operator log: %s)", err, runningLog)
	}
	start := time.Now()
	var createdAt time.Time
	res.Running, err = measure(ctx, w, first, want, start, func() error {
		if err := createServices(ctx, kube, o, devs); err != nil {
			return err
		}
		createdAt = time.Now()
		fmt.Fprintf(os.Stderr, "bench: %d Services and %d EndpointSlices created in %s under the running operator\n",
			o.services*(1+o.namespaces), o.services*o.namespaces, createdAt.Sub(start).Round(time.Second))
		return nil
	})
	if err != nil {
		first.stop()
		return nil, fmt.Errorf("%w (operator log: %s)", err, runningLog)
	}
	res.Running.AfterLastCreateSeconds = res.Running.ConvergeSeconds - createdAt.Sub(start).Seconds()
	peak := first.peakRSSMiB()
	first.stop()

	// Phase 2, cold start: every Service in place, no VirtualService, the operator starts.
	if err := deleteVirtualServices(ctx, cfg); err != nil {
		return nil, err
	}
	w.forget()
	var op *operatorProcess
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

	// Phase 3: production Services relabelled (a deploy tool's labels, say); their routes must not change, so the
	// watch should see no write and no route-count decrease within the window.
	res.Relabel, err = observeWindow(ctx, w, op, res.Relabelled, 15*time.Second, func() error {
		return relabel(ctx, kube, res.Relabelled)
	})
	if err != nil {
		return nil, err
	}
	// Phase 2: the header renamed and one developer namespace dropped, in one ConfigMap edit.
	want = routeState{routes: o.namespaces, header: "x-dev"}
	res.ConfigEdit, err = measure(ctx, w, &lazyOperator{&op}, want, time.Time{}, func() error {
		cm.Data["config.yaml"] = fixture.ConfigText(prodNS, devs[1:], "x-dev")
		_, err := kube.CoreV1().ConfigMaps(operatorNS).Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%w (operator log: %s)", err, op.logFile)
	}
	res.PeakRSSMiB = max(peak, op.peakRSSMiB())
	return res, nil
}

// deleteVirtualServices deletes every VirtualService of the production namespace and waits until none is left.
func deleteVirtualServices(ctx context.Context, cfg *rest.Config) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	vss := dyn.Resource(fixture.VirtualServices).Namespace(prodNS)
	if err := vss.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := vss.List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 0, err
	})
}

// relabel adds a label to the first n production Services.
func relabel(ctx context.Context, kube kubernetes.Interface, n int) error {
	patch := []byte(`{"metadata":{"labels":{"bench.virtual-ingress.io/relabelled":"true"}}}`)
	for i := range n {
		if _, err := kube.CoreV1().Services(prodNS).Patch(ctx, fmt.Sprintf("svc-%03d", i), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// createServices creates, Service by Service, the production one and then its developer copies (each with a ready
// EndpointSlice), so that a running operator sees developer routes arrive for existing VirtualServices; 32 requests in
// flight.
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
	for i := range o.services {
		for _, ns := range append([]string{prodNS}, devs...) {
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
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}
