package main

import (
	"context"
	"fmt"
	"maps"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// restarts measures what a start of Kyverno's background controller, and a `helm upgrade` that rewrites every policy,
// cost a namespace of n resolved VirtualIngresses among 2n Services (half of them selected by nobody): Kyverno hands
// the service-events policies every existing Service on both. Nothing happened to those Services, so the target is no
// write of a VirtualIngress, and a Service recreated right after is followed as fast as any other.
type restarts struct {
	VirtualIngresses int `json:"virtualIngresses"`
	Services         int `json:"services"`
	// Restart and Upgrade are the two events.
	Restart *restartResult `json:"backgroundControllerRestart,omitempty"`
	Upgrade *restartResult `json:"helmUpgrade,omitempty"`
	Error   string         `json:"error,omitempty"`
}

type restartResult struct {
	// Seconds is how long the event took: the controller's stop, start and lease; the upgrade's API calls.
	Seconds float64 `json:"seconds"`
	// Written counts the VirtualIngresses whose resourceVersion changed, the recreated Service's one excepted, until
	// Kyverno's queue drained (target 0).
	Written int `json:"virtualIngressesWritten"`
	// FollowMs is the time from recreating a Service right after the event to its Ingress following.
	FollowMs float64 `json:"recreateFollowedMs"`
	// PeakUpdateRequests is the most UpdateRequests that existed at once meanwhile.
	PeakUpdateRequests int `json:"peakUpdateRequests"`
	// DrainSeconds is the time from the event to Kyverno's queue being empty again, or to the end of the wait (the
	// bench's --timeout after the recreation was followed), when PendingAtEnd UpdateRequests were left.
	DrainSeconds float64 `json:"drainSeconds"`
	PendingAtEnd int     `json:"pendingUpdateRequestsAtEnd"`
}

func (b *bench) restartRun(ctx context.Context, release *helmrelease.Release, values map[string]any, n int) (*restarts, error) {
	ns, err := b.namespace(ctx, "bench-restart")
	if err != nil {
		return nil, err
	}
	if err := parallel(2*n, func(i int) error {
		if i < n {
			_, err := b.createService(ctx, ns, fmt.Sprintf("svc-%d", i), labelsFor(i))
			return err
		}
		_, err := b.createService(ctx, ns, fmt.Sprintf("other-%d", i), map[string]string{"app": fmt.Sprintf("other-%d", i)})
		return err
	}); err != nil {
		return nil, err
	}
	iw, err := b.watchIngresses(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer iw.stop()
	if err := b.createVirtualIngresses(ctx, ns, n); err != nil {
		return nil, err
	}
	if resolved, _ := iw.countResolved(n, func(i int) string { return fmt.Sprintf("svc-%d", i) }, b.timeout, nil); resolved < n {
		return nil, fmt.Errorf("only %d of %d VirtualIngresses resolved before the restart", resolved, n)
	}
	if err := b.waitUpdateRequestsDrained(ctx); err != nil {
		return nil, err
	}
	r := &restarts{VirtualIngresses: n, Services: 2 * n}
	r.Restart, err = b.afterEvent(ctx, iw, ns, 0, func() error {
		if err := b.cluster.StopComponent(devcluster.ComponentKyvernoBackground); err != nil {
			return err
		}
		return b.cluster.StartComponent(ctx, devcluster.ComponentKyvernoBackground)
	})
	if err != nil {
		return r, fmt.Errorf("background controller restart: %w", err)
	}
	// An upgrade-safe value that every policy renders: each is rewritten, as a chart upgrade rewrites them.
	upgraded, policy := maps.Clone(values), map[string]any{}
	if p, ok := values["policy"].(map[string]any); ok {
		policy = maps.Clone(p)
	}
	policy["webhookTimeoutSeconds"] = 11
	upgraded["policy"] = policy
	r.Upgrade, err = b.afterEvent(ctx, iw, ns, 1, func() error {
		if err := release.Upgrade(ctx, upgraded); err != nil {
			return err
		}
		return b.cluster.WaitPoliciesReady(ctx, "app.kubernetes.io/part-of=virtual-ingress")
	})
	if err != nil {
		return r, fmt.Errorf("helm upgrade: %w", err)
	}
	return r, nil
}

// afterEvent runs event, then recreates Service svc-<i> under a new name and times its Ingress following, waits for
// Kyverno's queue to drain, and counts the other VirtualIngresses written meanwhile.
func (b *bench) afterEvent(ctx context.Context, iw *ingressWatch, ns string, i int, event func() error) (*restartResult, error) {
	before, err := b.resourceVersions(ctx, ns)
	if err != nil {
		return nil, err
	}
	peak := b.trackUpdateRequests(ctx)
	start := time.Now()
	if err := event(); err != nil {
		return nil, err
	}
	res := &restartResult{Seconds: time.Since(start).Seconds()}
	old, renamed := fmt.Sprintf("svc-%d", i), fmt.Sprintf("svc-%d-new", i)
	recreated := time.Now()
	if err := b.kube.CoreV1().Services(ns).Delete(ctx, old, metav1.DeleteOptions{}); err != nil {
		return nil, err
	}
	if _, err := b.createService(ctx, ns, renamed, labelsFor(i)); err != nil {
		return nil, err
	}
	followed, err := iw.waitFor(virtualingress.GeneratedName(fmt.Sprintf("vi-%d", i)), renamed, b.timeout)
	if err != nil {
		return nil, err
	}
	res.FollowMs = float64(followed.Sub(recreated).Microseconds()) / 1000
	// A queue still busy after the wait is a figure, not a failure: the writes are counted all the same.
	if err := b.waitUpdateRequestsDrained(ctx); err != nil {
		pending, listErr := devcluster.PendingUpdateRequests(ctx, b.dyn)
		if listErr != nil {
			return nil, listErr
		}
		res.PendingAtEnd = len(pending)
	}
	res.DrainSeconds = time.Since(start).Seconds()
	res.PeakUpdateRequests = peak()
	after, err := b.resourceVersions(ctx, ns)
	if err != nil {
		return nil, err
	}
	for name, rv := range before {
		if name != fmt.Sprintf("vi-%d", i) && after[name] != rv {
			res.Written++
		}
	}
	return res, nil
}

func (b *bench) resourceVersions(ctx context.Context, ns string) (map[string]string, error) {
	list, err := b.meta.Resource(virtualingress.GVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(list.Items))
	for _, item := range list.Items {
		out[item.Name] = item.ResourceVersion
	}
	return out, nil
}
