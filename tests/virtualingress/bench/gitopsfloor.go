package main

import (
	"context"
	"fmt"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// The GitOps floor is what Kyverno itself costs for the GitOps apply's burst: the floor's bare generate rule
// (floorClusterPolicy: no context, no status, no Service events) on as many triggers, applied at once with as many
// Services by applyPairs, in the same three orders and by server-side apply as gitopsLatency's pairs. The Services
// are there so that the API server takes the same writes as in the engines' burst; the floor's policy does not match
// them, so they cost Kyverno nothing. Each pair is timed as the engines' are, from its first apply, to its Ingress on
// a watch, and each engine's GitOps p95 is reported as a ratio to the floor's.
type gitopsFloorResult struct {
	// Pairs is the number of triggers, and of Services, applied at once.
	Pairs int `json:"pairs"`
	// ApplyToIngress times each pair from its first apply to its Ingress on a watch.
	ApplyToIngress *latency `json:"applyToIngress"`
	// Late counts the Ingresses that came later than gitopsUnresolvedAfter.
	Late int `json:"ingressLaterThan5s"`
	// KyvernoRestarts counts the restarts of Kyverno's controllers during the measurement (see supervisor): one
	// would put its restart into the floor's time.
	KyvernoRestarts map[string]int `json:"kyvernoRestarts,omitempty"`
}

// gitopsFloor measures the GitOps floor with progress on stdout. A failed measurement is in the result's
// ApplyToIngress.Error; an error is returned only when the floor could not be installed or cleaned up after, which
// leaves the cluster unfit for the engines.
func (b *bench) gitopsFloor(ctx context.Context, n int) (*gitopsFloorResult, error) {
	start := time.Now()
	r := &gitopsFloorResult{Pairs: n}
	err := b.withFloorPolicy(ctx, func() error {
		_ = b.kyverno.take() // restarts before this measurement are not its own
		r.ApplyToIngress = latencyRow("gitops floor", fmt.Sprintf("%d triggers of one context-free generate rule and %d Services applied at once, to Ingress", n, n),
			gitopsTarget, func() ([]time.Duration, error) {
				samples, late, err := b.gitopsFloorRun(ctx, n)
				r.Late = late
				return samples, err
			})
		r.KyvernoRestarts = b.kyverno.take()
		return nil
	})
	if err != nil {
		return r, fmt.Errorf("gitops floor: %w", err)
	}
	fmt.Printf("[gitops floor] %s (run and clean-up %.0f s)\n", r.summary(), time.Since(start).Seconds())
	return r, nil
}

// gitopsFloorRun applies n pairs (trigger vi-<i> naming Service svc-<i>, and that Service) in a namespace of their
// own and times each until its Ingress is on the watch.
func (b *bench) gitopsFloorRun(ctx context.Context, n int) (samples []time.Duration, late int, err error) {
	if err := b.warmFloor(ctx); err != nil {
		return nil, 0, err
	}
	ns, err := b.namespace(ctx, "bench-gitops")
	if err != nil {
		return nil, 0, err
	}
	iw, err := b.watchIngresses(ctx, ns)
	if err != nil {
		return nil, 0, err
	}
	defer iw.stop()
	starts, err := applyPairs(n,
		func(i int) error { return b.applyService(ctx, ns, fmt.Sprintf("svc-%d", i), labelsFor(i)) },
		func(i int) error { return b.applyFloorTrigger(ctx, ns, i) })
	if err != nil {
		return nil, 0, err
	}
	want := map[string]string{}
	for i := range n {
		want[virtualingress.GeneratedName(fmt.Sprintf("vi-%d", i))] = fmt.Sprintf("svc-%d", i)
	}
	seen := iw.followAll(want, b.timeout)
	if len(seen) < n {
		return nil, 0, fmt.Errorf("%d of %d Ingresses on the watch within %s", len(seen), n, b.timeout)
	}
	samples, late = sinceStarts(starts, func(i int) time.Time { return seen[virtualingress.GeneratedName(fmt.Sprintf("vi-%d", i))] })
	return samples, late, nil
}

// warmFloor has Kyverno generate one Ingress for one trigger, in a namespace of its own, before the burst: installFloor
// has just restarted Kyverno, and the engines' bursts come after their create and recreate latencies have warmed
// Kyverno's clients and caches: a cold floor would add Kyverno's start-up to the floor, and make the engines look
// closer to it than they are.
func (b *bench) warmFloor(ctx context.Context) error {
	ns, err := b.namespace(ctx, "bench-gitops-warmup")
	if err != nil {
		return err
	}
	iw, err := b.watchIngresses(ctx, ns)
	if err != nil {
		return err
	}
	defer iw.stop()
	if err := b.applyFloorTrigger(ctx, ns, 0); err != nil {
		return err
	}
	if _, err := iw.waitFor(virtualingress.GeneratedName("vi-0"), "svc-0", b.timeout); err != nil {
		return fmt.Errorf("warming Kyverno up: %w", err)
	}
	return nil
}

// applyFloorTrigger applies the floor's i-th trigger (floorTrigger) as applyVirtualIngress applies a VirtualIngress.
func (b *bench) applyFloorTrigger(ctx context.Context, ns string, i int) error {
	return virtualingress.Apply(ctx, b.dyn, floorGVR, floorTrigger(ns, i, nil))
}

// p95Ratio is an engine's GitOps p95 over the floor's; 0 without a complete measurement of both.
func (f *gitopsFloorResult) p95Ratio(engine *latency) float64 {
	if f == nil || f.ApplyToIngress == nil || f.ApplyToIngress.Error != "" || f.ApplyToIngress.P95 == 0 || engine == nil || engine.Error != "" {
		return 0
	}
	return engine.P95 / f.ApplyToIngress.P95
}

// summary is the floor's figures as the table's line above it shows them.
func (f *gitopsFloorResult) summary() string {
	l := f.ApplyToIngress
	switch {
	case l == nil: // the floor could not be installed
		return "not measured"
	case l.Error != "":
		return fmt.Sprintf("FAILED after %d samples: %s", l.Samples, l.Error)
	}
	return fmt.Sprintf("p50 / p95 / max %.0f / %.0f / %.0f ms, %d later than %s", l.P50, l.P95, l.Max, f.Late, gitopsUnresolvedAfter)
}
