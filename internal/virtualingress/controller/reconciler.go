package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Reconciler keeps the Ready condition of every VirtualIngress (VirtualHTTPRoute) true to its Ingress (HTTPRoute), and
// repairs what Kyverno dropped. One Reconciler serves one kind.
type Reconciler struct {
	kind     *sourceKind
	client   client.Client
	recorder events.EventRecorder
	opts     Options
	clock    clock.Clock
	copied   copied

	mu sync.Mutex
	// tracked remembers, per VirtualIngress, since when a transient divergence has lasted and how its repairs went.
	tracked map[types.UID]*divergence
}

type divergence struct {
	reason string
	// urgent, first and now: some verdict of this divergence was (a first Ingress stays awaited once its absence is
	// reported, which changes the Ready condition the verdict reads).
	urgent, first, now bool
	// early: the first repair came before RepairAfter (urgent, now or first). It does not count toward the back-off:
	// it was a quick try, and a dropped one (Kyverno over its threshold) should be followed after RepairAfter, as a
	// divergence without it would be, not after twice that.
	early      bool
	since      time.Time
	lastRepair time.Time
	repairs    int
}

// Reconcile computes the Ready verdict of one VirtualIngress and writes it when it changed. A divergence the normal
// path usually clears (Kyverno still generating) is reported only once it outlasts Options.Grace (PendingGrace for a
// new one whose request Kyverno still holds); one that outlasts Options.RepairAfter while Kyverno holds no request for
// it is repaired by writing the VirtualIngress (the policies then re-resolve and regenerate), with a doubling
// back-off.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.kind.newSource()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		r.forget(obj.GetUID())
		return ctrl.Result{}, nil
	}
	vi, err := r.kind.decode(obj)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading %s %s: %w", r.kind.gvk.Kind, req, err)
	}
	// No Resolved condition: the policies do not serve this namespace, and its status is read-only.
	if vi.condition(ConditionResolved) == nil {
		return ctrl.Result{}, nil
	}
	in, gen, err := r.gather(ctx, vi)
	if err != nil {
		return ctrl.Result{}, err
	}
	pending := gen.pending
	v := decide(in)
	// Once here, so that the comparison, the condition, the Event and a repair's note all carry the same text.
	v.message = sanitize(v.message)
	full := false
	if v.repairable && !pending {
		if full, err = r.queueFull(ctx); err != nil {
			return ctrl.Result{}, err
		}
	}
	now := r.clock.Now()
	current := vi.condition(ConditionReady)
	report, repair, wait := r.plan(vi.meta.GetUID(), v, pending, pending && current == nil, full, now)
	parents := r.parents(in)
	changed := current == nil || current.Status != v.status || current.Reason != v.reason || current.Message != v.message ||
		(r.kind.gateways != nil && !equality.Semantic.DeepEqual(vi.parents, parents))
	if (report && changed) || repair {
		// A repair before the report leaves the Ready condition as it was (when there is one).
		written := v
		if !report && current != nil {
			written = verdict{status: current.Status, reason: current.Reason, message: current.Message}
		}
		note := ""
		if repair {
			note = v.message
		}
		err := r.write(ctx, obj, vi, written, parents, note, now)
		switch {
		case apierrors.IsConflict(err):
			return ctrl.Result{RequeueAfter: time.Second}, nil
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
			// Refused by admission: under the clusterPolicy engine a VirtualIngress whose Ingress name someone else
			// took may not be written at all (a write would hand that Ingress to Kyverno). The Event still tells.
			log.FromContext(ctx).Info("status write refused", "error", err.Error())
			wait = r.opts.RepairAfter
		case err != nil:
			return ctrl.Result{}, err
		}
		if report && changed {
			eventType := corev1.EventTypeWarning
			if v.status == metav1.ConditionTrue {
				eventType = corev1.EventTypeNormal
			}
			r.recorder.Eventf(obj, nil, eventType, v.reason, "Check", "%s", v.message)
		}
		if repair {
			log.FromContext(ctx).Info("repairing", "reason", v.reason, "message", v.message)
		}
	}
	if wait <= 0 {
		wait = r.opts.Resync
	}
	if gen.orphanIn > 0 {
		// A request that never gets a state holds the report and the repair only until it counts as an orphan.
		wait = min(wait, gen.orphanIn)
	}
	return ctrl.Result{RequeueAfter: wait}, nil
}

// gather reads the generated object, Kyverno's requests and the Services the verdict depends on, from the caches.
func (r *Reconciler) gather(ctx context.Context, vi *view) (inputs, generation, error) {
	ns := vi.meta.GetNamespace()
	in := inputs{kind: r.kind, vi: vi, uid: vi.meta.GetUID()}
	if vi.generatedName != "" {
		generated := r.kind.newGenerated()
		err := r.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: vi.generatedName}, generated)
		switch {
		case err == nil:
			if in.generated, err = r.kind.state(generated, vi.want); err != nil {
				return in, generation{}, err
			}
			in.generated.metadataLag = r.copied.lag(vi.meta, generated, r.kind.backReferenceLabel)
		case !apierrors.IsNotFound(err):
			return in, generation{}, err
		}
	}
	requests := newUpdateRequestList()
	if err := r.client.List(ctx, requests, client.InNamespace(r.opts.KyvernoNamespace),
		client.MatchingFields{triggerIndex: triggerKey(r.kind.gvk.Kind, ns, vi.meta.GetName())}); err != nil {
		return in, generation{}, err
	}
	gen := generationState(requests.Items, r.clock.Now())
	in.failure = gen.failure
	services, err := r.selectedServices(ctx, ns, vi.backends)
	if err != nil {
		return in, generation{}, err
	}
	var found string
	in.lag, found = resolutionLag(vi.backends, services, r.opts.OnMultipleMatches)
	in.lagFound = found != ""
	in.lagUnfollowed = in.lagFound && namedByTheServer(services, found)
	return in, gen, nil
}

// selectedServices reads the Services of ns that some backend's selector matches: all that resolution depends on.
// Reading only those (the cache filters by labels before it copies) keeps a reconcile from copying every Service of
// a namespace that holds thousands.
func (r *Reconciler) selectedServices(ctx context.Context, ns string, backends []backend) ([]corev1.Service, error) {
	var out []corev1.Service
	seen := map[string]bool{}
	for _, b := range backends {
		if len(b.MatchLabels) == 0 {
			continue
		}
		list := &corev1.ServiceList{}
		if err := r.client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(b.MatchLabels)); err != nil {
			return nil, err
		}
		for _, s := range list.Items {
			if !seen[s.Name] {
				seen[s.Name] = true
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// queueFull tells whether Kyverno's UpdateRequests are so many that Kyverno would drop the one a repair makes
// (updateRequestThreshold counts every UpdateRequest, not only pending ones). Its queue is read from the cache, which
// trails the API server by the repairs just made: the headroom below the threshold absorbs them.
func (r *Reconciler) queueFull(ctx context.Context) (bool, error) {
	requests := newUpdateRequestList()
	if err := r.client.List(ctx, requests, client.InNamespace(r.opts.KyvernoNamespace), client.UnsafeDisableDeepCopy); err != nil {
		return false, err
	}
	return len(requests.Items) >= r.opts.UpdateRequestThreshold*9/10, nil
}

// plan decides whether to report the verdict now, whether to repair, and when to look again. A repair that is due
// while Kyverno's queue is full waits for room without counting as a repair: it would be dropped, and the doubling
// back-off would then delay the next one for nothing. queued says that Kyverno holds a request for a source never
// reported on: a new one, waiting its turn in Kyverno's queue, whose first report waits up to PendingGrace, since
// Kyverno's answer usually makes it (a report meanwhile would be one more write for Kyverno to process).
func (r *Reconciler) plan(uid types.UID, v verdict, pending, queued, full bool, now time.Time) (report, repair bool, wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !v.transient && !v.repairable {
		delete(r.tracked, uid)
		return true, false, 0
	}
	d := r.tracked[uid]
	if d == nil || d.reason != v.reason {
		d = &divergence{reason: v.reason, since: now}
		if old := r.tracked[uid]; old != nil {
			d.lastRepair, d.repairs, d.early = old.lastRepair, old.repairs, old.early
		}
		r.tracked[uid] = d
	}
	d.urgent = d.urgent || v.urgent
	d.now = d.now || v.now
	d.first = d.first || v.first
	lasted := now.Sub(d.since)
	grace := r.opts.Grace
	if queued {
		grace = max(grace, r.opts.PendingGrace)
	}
	report = !v.transient || lasted >= grace
	after := r.opts.RepairAfter
	switch {
	case d.now:
		after = 0
	case d.urgent:
		after = r.opts.LagRepairAfter
	case d.first:
		after = max(r.opts.LagRepairAfter, r.opts.Grace)
	}
	next := d.since.Add(after)
	if !d.lastRepair.IsZero() {
		next = d.lastRepair.Add(r.backoff(d.steps()))
	}
	// While Kyverno still holds a request for this VirtualIngress, it is working on it (and retries failures itself).
	// A repair may come before the report (a lagging resolution): it is what clears the divergence.
	if v.repairable && !pending && !now.Before(next) {
		if full {
			return report, false, r.opts.Grace
		}
		d.lastRepair = now
		if d.repairs == 0 && after < r.opts.RepairAfter {
			d.early = true
		}
		d.repairs++
		return report, true, r.backoff(d.steps())
	}
	if !report {
		wait = grace - lasted
		if v.repairable && !pending && now.Before(next) {
			wait = min(wait, next.Sub(now))
		}
		return false, false, wait
	}
	if now.Before(next) {
		return true, false, next.Sub(now)
	}
	return true, false, r.opts.RepairAfter
}

// steps is how many repairs the back-off counts.
func (d *divergence) steps() int {
	if d.early {
		return d.repairs - 1
	}
	return d.repairs
}

// backoff is the wait after the given number of repairs: RepairAfter doubled per repair, capped.
func (r *Reconciler) backoff(repairs int) time.Duration {
	return min(r.opts.RepairAfter<<min(repairs, 10), r.opts.MaxRepairBackoff)
}

func (r *Reconciler) forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.tracked, uid)
}

// parents is status.parents to write: the generated route's, each message sanitized like the condition's (a Gateway
// controller's text is someone else's). nil for kinds without parents.
func (r *Reconciler) parents(in inputs) []parent {
	if r.kind.gateways == nil {
		return nil
	}
	parents := []parent{}
	if in.generated != nil {
		for _, p := range in.generated.parents {
			p.Reason, p.Message = sanitize(p.Reason), sanitize(p.Message)
			parents = append(parents, p)
		}
	}
	return parents
}
