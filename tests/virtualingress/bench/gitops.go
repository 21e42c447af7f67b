package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// gitopsTarget is the p95 from a GitOps sync applying a Service and its VirtualIngress to the VirtualIngress being
// Ready; gitopsUnresolvedAfter is when none may still be waiting.
const (
	gitopsTarget          = time.Second
	gitopsUnresolvedAfter = 5 * time.Second
)

// gitopsSplit is a GitOps burst's pairs timed from their first apply to three steps: the VirtualIngress resolved to
// its Service (the resolve policy's work, at admission or after a Service event), its Ingress routing to that Service
// (Kyverno's generation: what the GitOps floor is timed to), and Ready (the status controller's word). Each step's
// Late counts the pairs past gitopsUnresolvedAfter.
type gitopsSplit struct {
	Resolved, Ingress, Ready        []time.Duration
	ResolvedLate, IngressLate, Late int
}

// gitopsLatency applies n pairs at once, as a GitOps sync does (server-side apply, each pair its own selector): a
// Service and the VirtualIngress that selects it, in turn Service first, VirtualIngress first, and the Service 50 ms
// before. Each is timed from its first apply to each step of gitopsSplit, on watches of the VirtualIngresses and the
// Ingresses.
func (b *bench) gitopsLatency(ctx context.Context, n int) (gitopsSplit, error) {
	var out gitopsSplit
	ns, err := b.namespace(ctx, "bench-gitops")
	if err != nil {
		return out, err
	}
	w, err := b.watchVirtualIngresses(ctx, ns)
	if err != nil {
		return out, err
	}
	defer w.stop()
	iw, err := b.watchIngresses(ctx, ns)
	if err != nil {
		return out, err
	}
	defer iw.stop()
	pair := func(i int) string { return fmt.Sprintf("pair-%d", i) }
	service := func(i int) string { return fmt.Sprintf("svc-pair-%d", i) }
	starts, err := applyPairs(n,
		func(i int) error { return b.applyService(ctx, ns, service(i), labelsFor(i)) },
		func(i int) error { return b.applyVirtualIngress(ctx, ns, pair(i), labelsFor(i)) })
	if err != nil {
		return out, err
	}
	names := make([]string, n)
	wantIngress := map[string]string{}
	for i := range n {
		names[i] = pair(i)
		wantIngress[virtualingress.GeneratedName(pair(i))] = service(i)
	}
	// The Ingress watch is drained meanwhile, so that its events are timed when they arrive.
	ingresses := make(chan map[string]time.Time, 1)
	go func() { ingresses <- iw.followAll(wantIngress, b.timeout) }()
	seen, err := w.waitAllOf(names, map[string]func(*unstructured.Unstructured) bool{
		"Resolved": isResolved,
		"Ready":    isReady,
	}, b.timeout)
	if err != nil {
		return out, err
	}
	generated := <-ingresses
	if len(generated) < n {
		return out, fmt.Errorf("%d of %d Ingresses routing to their Service within %s", len(generated), n, b.timeout)
	}
	out.Resolved, out.ResolvedLate = sinceStarts(starts, func(i int) time.Time { return seen["Resolved"][pair(i)] })
	out.Ingress, out.IngressLate = sinceStarts(starts, func(i int) time.Time { return generated[virtualingress.GeneratedName(pair(i))] })
	out.Ready, out.Late = sinceStarts(starts, func(i int) time.Time { return seen["Ready"][pair(i)] })
	return out, nil
}

// applyPairs applies n pairs at once, one goroutine each as a GitOps sync's parallel applies: in turn service(i)
// first, source(i) first, and service(i) 50 ms before source(i). It returns when each pair's first apply started.
// The GitOps floor applies its pairs through it too, so that both bursts are the same.
func applyPairs(n int, service, source func(i int) error) ([]time.Time, error) {
	starts := make([]time.Time, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			steps := []func() error{func() error { return service(i) }, func() error { return source(i) }}
			switch i % 3 {
			case 1:
				steps[0], steps[1] = steps[1], steps[0]
			case 2:
				steps[1] = func() error { time.Sleep(50 * time.Millisecond); return source(i) }
			}
			starts[i] = time.Now()
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
	return starts, <-errs
}

// sinceStarts is each pair's time from its first apply to done(i), and how many took longer than
// gitopsUnresolvedAfter.
func sinceStarts(starts []time.Time, done func(i int) time.Time) (samples []time.Duration, late int) {
	for i, start := range starts {
		took := done(i).Sub(start)
		if took > gitopsUnresolvedAfter {
			late++
		}
		samples = append(samples, took)
	}
	return samples, late
}

// applyService and applyVirtualIngress are server-side applies, as Argo CD and Flux write.
func (b *bench) applyService(ctx context.Context, ns, name string, labels map[string]string) error {
	return virtualingress.Apply(ctx, b.dyn, virtualingress.ServiceGVR, virtualingress.TenantService(ns, name, labels))
}

func (b *bench) applyVirtualIngress(ctx context.Context, ns, name string, labels map[string]string) error {
	return virtualingress.Apply(ctx, b.dyn, virtualingress.GVR, virtualingress.New(ns, name, virtualingress.CoderSpec(labels)))
}
