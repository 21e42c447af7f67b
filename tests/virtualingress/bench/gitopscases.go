package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// matchTarget is the p95 from a Service starting to match a VirtualIngress that waits for it (created with
// generateName, or relabelled) to the VirtualIngress being Ready on it: the target, the same as the GitOps
// apply's, but for one Service at a time.
const matchTarget = time.Second

// matchCase is a way a Service comes to match a VirtualIngress that already waits, unresolved, for it; what a CCM
// does besides creating Services under names of its own (the recreate latency's case).
type matchCase struct {
	what      string
	namespace string
	// prepare runs once, before any VirtualIngress and off the clock: what must exist long before the Service
	// matches.
	prepare func(ctx context.Context, ns string, n int) error
	// match makes a Service carry labelsFor(i) and returns its name; it is what the clock times.
	match func(ctx context.Context, ns string, i int) (service string, err error)
}

// generateNameCase creates the Service with metadata.generateName, as controllers that let the API server name
// their objects do. Kyverno's background controller looks a CREATE's trigger up by the name admission saw, which such
// a Service lacks at mutating admission: the generatingPolicy engine's MutatingPolicy loses the event, and the status
// controller's repair, made at once for such a Service, is what resolves the VirtualIngress; this row is what that
// costs. (Run H: the clusterPolicy engine followed 19 of 20 itself, in about 0.2 s.)
func (b *bench) generateNameCase() matchCase {
	return matchCase{
		what:      "Services created with generateName",
		namespace: "bench-generatename",
		match: func(ctx context.Context, ns string, i int) (string, error) {
			svc := newService(ns, "", labelsFor(i))
			svc.GenerateName = "tenant-"
			created, err := b.kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
			if err != nil {
				return "", err
			}
			return created.Name, nil
		},
	}
}

// relabelCase adds the selected labels to a Service that existed before its VirtualIngress and matched nothing: a
// Service event Kyverno sees (an UPDATE, with a name), unlike generateName's.
func (b *bench) relabelCase() matchCase {
	return matchCase{
		what:      "existing Services relabelled to match",
		namespace: "bench-relabel",
		prepare: func(ctx context.Context, ns string, n int) error {
			for i := range n {
				if _, err := b.createService(ctx, ns, relabelService(i), map[string]string{"cluster.x-k8s.io/cluster-name": "bench"}); err != nil {
					return err
				}
			}
			return nil
		},
		match: func(ctx context.Context, ns string, i int) (string, error) {
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labelsFor(i)}})
			if err != nil {
				return "", err
			}
			_, err = b.kube.CoreV1().Services(ns).Patch(ctx, relabelService(i), types.MergePatchType, patch, metav1.PatchOptions{})
			return relabelService(i), err
		},
	}
}

func relabelService(i int) string { return fmt.Sprintf("svc-%d", i) }

// matchRow measures matchLatency's n cases of c for the engine under measurement, announced on stdout.
func (b *bench) matchRow(ctx context.Context, n int, c matchCase) *latency {
	return latencyRow(b.engine, fmt.Sprintf("%d %s, one at a time, each for a VirtualIngress waiting unresolved, to Ready", n, c.what),
		matchTarget, func() ([]time.Duration, error) { return b.matchLatency(ctx, n, c) })
}

// matchLatency runs n cases one after the other, not at once: a tenant's Service appearing or being relabelled is
// the day-to-day case, and a queue of them would measure Kyverno's throughput (the GitOps apply's row) rather than the
// path one Service takes. Each case applies a VirtualIngress selecting labelsFor(i) and waits, off the clock, until
// the resolve policy says it matches nothing; then it is timed from just before c.match's write to the first event
// showing the VirtualIngress Ready on that Service. On an error it returns the samples taken before it.
func (b *bench) matchLatency(ctx context.Context, n int, c matchCase) (samples []time.Duration, err error) {
	ns, err := b.namespace(ctx, c.namespace)
	if err != nil {
		return samples, err
	}
	if c.prepare != nil {
		if err := c.prepare(ctx, ns, n); err != nil {
			return samples, err
		}
	}
	w, err := b.watchVirtualIngresses(ctx, ns)
	if err != nil {
		return samples, err
	}
	defer w.stop()
	for i := range n {
		name := fmt.Sprintf("vi-%d", i)
		if err := b.applyVirtualIngress(ctx, ns, name, labelsFor(i)); err != nil {
			return samples, err
		}
		if _, err := w.waitFor(name, "unresolved", isUnresolved, b.timeout); err != nil {
			return samples, err
		}
		start := time.Now()
		service, err := c.match(ctx, ns, i)
		if err != nil {
			return samples, err
		}
		ready, err := w.waitFor(name, "Ready on "+service, readyOn(service), b.timeout)
		if err != nil {
			return samples, err
		}
		samples = append(samples, ready.Sub(start))
	}
	return samples, nil
}
