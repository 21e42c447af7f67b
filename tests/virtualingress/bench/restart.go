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
	// Recreated Services are deleted and created under a new name right after the event, all at once; FollowMs is
	// the time from the first deletion to the last of their Ingresses following, FollowP50Ms the median, and
	// Within5s how many followed within restartFollowTarget (target: all).
	Recreated   int     `json:"servicesRecreated"`
	FollowMs    float64 `json:"recreateFollowedMs"`
	FollowP50Ms float64 `json:"recreateFollowedP50Ms"`
	Within5s    int     `json:"followedWithin5s"`
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
	k := min(b.restartRecreates, n/2)
	r.Restart, err = b.afterEvent(ctx, iw, ns, 0, k, func() error {
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
	r.Upgrade, err = b.afterEvent(ctx, iw, ns, k, k, func() error {
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

// restartFollowTarget is how soon after a restart or an upgrade every recreated Service's Ingress must follow.
const restartFollowTarget = 5 * time.Second

// afterEvent runs event, then recreates Services svc-<first>..svc-<first+k-1> under new names at once and times their
// Ingresses following, waits for Kyverno's queue to drain, and counts the other VirtualIngresses written meanwhile.
func (b *bench) afterEvent(ctx context.Context, iw *ingressWatch, ns string, first, k int, event func() error) (*restartResult, error) {
	before, err := b.resourceVersions(ctx, ns)
	if err != nil {
		return nil, err
	}
	peak := b.trackUpdateRequests(ctx)
	start := time.Now()
	if err := event(); err != nil {
		return nil, err
	}
	res := &restartResult{Seconds: time.Since(start).Seconds(), Recreated: k}
	want := map[string]string{}
	recreated := time.Now()
	if err := parallel(k, func(j int) error {
		i := first + j
		if err := b.kube.CoreV1().Services(ns).Delete(ctx, fmt.Sprintf("svc-%d", i), metav1.DeleteOptions{}); err != nil {
			return err
		}
		_, err := b.createService(ctx, ns, fmt.Sprintf("svc-%d-new", i), labelsFor(i))
		return err
	}); err != nil {
		return nil, err
	}
	for i := first; i < first+k; i++ {
		want[virtualingress.GeneratedName(fmt.Sprintf("vi-%d", i))] = fmt.Sprintf("svc-%d-new", i)
	}
	followed := iw.followAll(want, b.timeout)
	if len(followed) < k {
		return nil, fmt.Errorf("%d of %d Ingresses followed their recreated Service within %s", len(followed), k, b.timeout)
	}
	var took []time.Duration
	for _, at := range followed {
		d := at.Sub(recreated)
		took = append(took, d)
		if d <= restartFollowTarget {
			res.Within5s++
		}
	}
	summary := summarise(took, restartFollowTarget)
	res.FollowMs, res.FollowP50Ms = summary.Max, summary.P50
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
		var i int
		if _, err := fmt.Sscanf(name, "vi-%d", &i); err == nil && i >= first && i < first+k {
			continue
		}
		if after[name] != rv {
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
