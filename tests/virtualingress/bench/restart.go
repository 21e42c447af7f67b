package main

import (
	"context"
	"fmt"
	"maps"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

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
	// Restart and Upgrade are the two events; Quiet is the same recreations with no event before them, the
	// baseline that tells what the event itself costs.
	Quiet   *restartResult `json:"noEvent,omitempty"`
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
	// the time from the first deletion to the last of their Ingresses following, FollowP50Ms and FollowP95Ms the
	// percentiles, and Within5s how many followed within restartFollowTarget (target: all).
	Recreated   int     `json:"servicesRecreated"`
	FollowMs    float64 `json:"recreateFollowedMs"`
	FollowP50Ms float64 `json:"recreateFollowedP50Ms"`
	FollowP95Ms float64 `json:"recreateFollowedP95Ms"`
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
	service := func(i int) string { return fmt.Sprintf("svc-%d", i) }
	if resolved, _ := iw.countResolved(n, service, b.timeout, nil); resolved < n {
		// The watch may have been ended by the API server under the creations' load: a list has the last word, once
		// the status controller's repairs of what Kyverno dropped had the time to come.
		err := wait.PollUntilContextTimeout(ctx, 2*time.Second, b.timeout, true, func(ctx context.Context) (bool, error) {
			right, err := b.ingressesRight(ctx, ns, n, service)
			resolved = right
			return right == n, err
		})
		if err != nil {
			return nil, fmt.Errorf("only %d of %d VirtualIngresses resolved before the restart: %w", resolved, n, err)
		}
	}
	if err := b.waitUpdateRequestsDrained(ctx); err != nil {
		return nil, err
	}
	r := &restarts{VirtualIngresses: n, Services: 2 * n}
	k := min(b.restartRecreates, n/3)
	r.Quiet, err = b.afterEvent(ctx, ns, 2*k, k, func() error { return nil }, b.recreateService(ctx, ns))
	if err != nil {
		return r, fmt.Errorf("no event: %w", err)
	}
	r.Restart, err = b.afterEvent(ctx, ns, 0, k, b.restartBackground(ctx), b.recreateService(ctx, ns))
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
	r.Upgrade, err = b.afterEvent(ctx, ns, k, k, func() error {
		if err := release.Upgrade(ctx, upgraded); err != nil {
			return err
		}
		return b.cluster.WaitPoliciesReady(ctx, "app.kubernetes.io/part-of=virtual-ingress")
	}, b.recreateService(ctx, ns))
	if err != nil {
		return r, fmt.Errorf("helm upgrade: %w", err)
	}
	return r, nil
}

// restartFollowTarget is how soon after a restart or an upgrade every recreated Service's Ingress must follow.
const restartFollowTarget = 5 * time.Second

// restartBackground is the event of the restart rows: Kyverno's background controller stopped and started again, as
// a new leader after a Pod's deletion or an upgrade.
func (b *bench) restartBackground(ctx context.Context) func() error {
	return func() error {
		if err := b.cluster.StopComponent(devcluster.ComponentKyvernoBackground); err != nil {
			return err
		}
		return b.cluster.StartComponent(ctx, devcluster.ComponentKyvernoBackground)
	}
}

// recreateService is the change the restart rows time for a VirtualIngress: its Service svc-<i> deleted and created
// again as svc-<i>-new, as the CCM does.
func (b *bench) recreateService(ctx context.Context, ns string) func(i int) error {
	return func(i int) error {
		if err := b.kube.CoreV1().Services(ns).Delete(ctx, fmt.Sprintf("svc-%d", i), metav1.DeleteOptions{}); err != nil {
			return err
		}
		_, err := b.createService(ctx, ns, fmt.Sprintf("svc-%d-new", i), labelsFor(i))
		return err
	}
}

// afterEvent runs event, then makes change for i in first..first+k-1 at once, each of which must bring Ingress vi-<i>
// to route to svc-<i>-new, and times those Ingresses following; it then waits for Kyverno's queue to drain, and
// counts the other VirtualIngresses written meanwhile.
func (b *bench) afterEvent(ctx context.Context, ns string, first, k int, event func() error, change func(i int) error) (*restartResult, error) {
	// A watch of its own: an earlier one may have been ended by the API server under load.
	iw, err := b.watchIngresses(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer iw.stop()
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
	if err := parallel(k, func(j int) error { return change(first + j) }); err != nil {
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
	res.FollowMs, res.FollowP50Ms, res.FollowP95Ms = summary.Max, summary.P50, summary.P95
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
	if apierrors.IsNotFound(err) {
		// No VirtualIngress CRD yet (the floor runs before the chart is installed): nothing to count.
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(list.Items))
	for _, item := range list.Items {
		out[item.Name] = item.ResourceVersion
	}
	return out, nil
}
