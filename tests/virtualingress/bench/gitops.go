package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// gitopsTarget is the p95 from a GitOps sync applying a Service and its VirtualIngress to the VirtualIngress being
// Ready; gitopsUnresolvedAfter is when none may still be waiting.
const (
	gitopsTarget          = time.Second
	gitopsUnresolvedAfter = 5 * time.Second
)

var servicesGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// gitopsLatency applies n pairs at once, as a GitOps sync does (server-side apply, each pair its own selector): a
// Service and the VirtualIngress that selects it, in turn Service first, VirtualIngress first, and the Service 50 ms
// before. Each is timed from its first apply to its VirtualIngress's Ready=True on a watch; late counts those not
// Ready within gitopsUnresolvedAfter.
func (b *bench) gitopsLatency(ctx context.Context, n int) (samples []time.Duration, late int, err error) {
	ns, err := b.namespace(ctx, "bench-gitops")
	if err != nil {
		return nil, 0, err
	}
	w, err := b.dyn.Resource(virtualingress.GVR).Namespace(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, 0, err
	}
	defer w.Stop()
	starts := make([]time.Time, n)
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name, labels := fmt.Sprintf("pair-%d", i), labelsFor(i)
			service := func() error { return b.applyService(ctx, ns, "svc-"+name, labels) }
			source := func() error { return b.applyVirtualIngress(ctx, ns, name, labels) }
			starts[i] = time.Now()
			steps := []func() error{service, source}
			switch i % 3 {
			case 1:
				steps = []func() error{source, service}
			case 2:
				steps = []func() error{service, func() error { time.Sleep(50 * time.Millisecond); return source() }}
			}
			for _, step := range steps {
				if err := step(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return nil, 0, err
	}
	ready := map[string]time.Time{}
	deadline := time.After(b.timeout)
	for len(ready) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, 0, fmt.Errorf("watch of VirtualIngresses closed with %d of %d Ready", len(ready), n)
			}
			vi, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj || ev.Type == watch.Deleted {
				continue
			}
			if _, seen := ready[vi.GetName()]; seen {
				continue
			}
			if s, _, _ := virtualingress.Condition(vi, "Ready"); s == "True" {
				ready[vi.GetName()] = time.Now()
			}
		case <-deadline:
			return nil, 0, fmt.Errorf("%d of %d VirtualIngresses Ready within %s", len(ready), n, b.timeout)
		}
	}
	for i := range n {
		took := ready[fmt.Sprintf("pair-%d", i)].Sub(starts[i])
		if took > gitopsUnresolvedAfter {
			late++
		}
		samples = append(samples, took)
	}
	return samples, late, nil
}

// applyService and applyVirtualIngress are server-side applies by the field manager "gitops", as Argo CD and Flux
// write.
func (b *bench) applyService(ctx context.Context, ns, name string, labels map[string]string) error {
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(80)}}},
	}}
	svc.SetLabels(labels)
	_, err := b.dyn.Resource(servicesGVR).Namespace(ns).Apply(ctx, name, svc, metav1.ApplyOptions{FieldManager: "gitops", Force: true})
	return err
}

func (b *bench) applyVirtualIngress(ctx context.Context, ns, name string, labels map[string]string) error {
	vi := virtualingress.New(ns, name, virtualingress.CoderSpec(labels))
	_, err := b.dyn.Resource(virtualingress.GVR).Namespace(ns).Apply(ctx, name, vi, metav1.ApplyOptions{FieldManager: "gitops", Force: true})
	return err
}
