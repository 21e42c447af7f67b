package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// gitopsTarget is the p95 from a GitOps sync applying a Service and its VirtualIngress to the VirtualIngress being
// Ready; gitopsUnresolvedAfter is when none may still be waiting.
const (
	gitopsTarget          = time.Second
	gitopsUnresolvedAfter = 5 * time.Second
)

// gitopsLatency applies n pairs at once, as a GitOps sync does (server-side apply, each pair its own selector): a
// Service and the VirtualIngress that selects it, in turn Service first, VirtualIngress first, and the Service 50 ms
// before. Each is timed from its first apply to its VirtualIngress's Ready=True on a watch; late counts those not
// Ready within gitopsUnresolvedAfter.
func (b *bench) gitopsLatency(ctx context.Context, n int) (samples []time.Duration, late int, err error) {
	ns, err := b.namespace(ctx, "bench-gitops")
	if err != nil {
		return nil, 0, err
	}
	w, err := b.watchVirtualIngresses(ctx, ns)
	if err != nil {
		return nil, 0, err
	}
	defer w.stop()
	starts, err := applyPairs(n,
		func(i int) error { return b.applyService(ctx, ns, fmt.Sprintf("svc-pair-%d", i), labelsFor(i)) },
		func(i int) error { return b.applyVirtualIngress(ctx, ns, fmt.Sprintf("pair-%d", i), labelsFor(i)) })
	if err != nil {
		return nil, 0, err
	}
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("pair-%d", i)
	}
	ready, err := w.waitAll(names, "Ready", isReady, b.timeout)
	if err != nil {
		return nil, 0, err
	}
	samples, late = sinceStarts(starts, func(i int) time.Time { return ready[fmt.Sprintf("pair-%d", i)] })
	return samples, late, nil
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
