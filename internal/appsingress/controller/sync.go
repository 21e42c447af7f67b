package controller

import (
	"context"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/hosted"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
)

// sync takes the reconcile's steps in order (each observes, and writes what it must before the next can look),
// stops at the first that fails, and reports what it observed through decide.
func (r *Reconciler) sync(ctx context.Context, ai *v1alpha1.AppsIngress) (ctrl.Result, error) {
	key := types.NamespacedName{Namespace: ai.Namespace, Name: ai.Name}
	if ai.Spec.Suspend {
		// The hosted cluster is left alone and the entries stay as they are (publish is not called).
		r.hosted.Stop(key)
		return r.conclude(ai, observed{suspended: true}), nil
	}
	t, f := resolveTarget(ctx, r.reader, ai)
	if f != nil {
		return r.targetFailed(ctx, ai, key, f)
	}
	svcKey := serviceKey(ai, clusterName(ai))
	hc, apiBackend, f := r.connect(ctx, ai, key, svcKey, t)
	if f != nil {
		return r.conclude(ai, observed{target: f}), nil
	}
	if r.onlyWaiting(ai, hc) {
		// Nothing has changed since the entry was published: ask the servers again without a round of requests to
		// the hosted cluster, so that a fleet waiting for them costs the hosted API servers nothing.
		return r.publishAndCheck(ctx, ai, ai, observed{waiting: true, ips: externalIPs(hc.Watched())})
	}

	o := observed{serviceKey: svcKey, poolRanges: ai.Spec.MetalLB.IPAddressPoolRanges}
	if o.metallb = checkMetalLBCached(ctx, hc, ai.Spec.MetalLB); o.metallb != nil {
		return r.conclude(ai, o), nil
	}
	svc, f := r.applyServices(ctx, hc, ai, o.serviceKey)
	if o.service = f; f != nil {
		return r.conclude(ai, o), nil
	}
	o.ips = externalIPs(svc)
	next := ai.DeepCopy()
	next.Status.APIEndpoint, next.Status.APIBackend = t.apiEndpoint, apiBackend
	if len(o.ips) == 0 {
		// The API does not depend on the apps Service: its name is published at once.
		if next.Status.APIEndpoint != ai.Status.APIEndpoint || next.Status.APIBackend != ai.Status.APIBackend {
			_, o.configWrite = r.publish(ctx, ai, next)
		}
		return r.conclude(ai, o), nil
	}
	next.Status.ExternalIPs = make([]string, len(o.ips))
	for i, ip := range o.ips {
		next.Status.ExternalIPs[i] = ip.String()
	}
	return r.publishAndCheck(ctx, ai, next, o)
}

// targetFailed stops watching a hosted cluster that is gone or cannot be reached any more, and withdraws the
// entries of a deleted HostedCluster: unlike one that cannot be reached, which keeps its last good entries, its names
// must stop answering.
func (r *Reconciler) targetFailed(ctx context.Context, ai *v1alpha1.AppsIngress, key types.NamespacedName, f *failure) (ctrl.Result, error) {
	o := observed{target: f}
	if f.reason == "KubeconfigMissing" || f.reason == "HostedClusterNotFound" {
		r.hosted.Stop(key)
	}
	if f.reason == "HostedClusterNotFound" && (len(ai.Status.ExternalIPs) > 0 || ai.Status.APIEndpoint != "") {
		ai.Status.ExternalIPs, ai.Status.APIEndpoint, ai.Status.APIBackend = nil, "", ""
		if _, err := r.publisher.publish(ctx, ai); err != nil {
			return ctrl.Result{}, err
		}
		o.entriesWithdrawn = true
	}
	return r.conclude(ai, o), nil
}

// connect is the hosted cluster's client and its watch of Service svcKey, and the proxy's API backend (see reach);
// t.apiEndpoint falls back to the kubeconfig's server.
func (r *Reconciler) connect(ctx context.Context, ai *v1alpha1.AppsIngress, key, svcKey types.NamespacedName, t *target) (*hosted.Cluster, string, *failure) {
	if t.apiEndpoint == "" {
		if cfg, err := r.hosted.RESTConfig(t.kubeconfig); err == nil {
			t.apiEndpoint = endpointFromServer(cfg.Host)
		}
	}
	kubeconfig, apiBackend, err := r.reach(ctx, ai, t)
	if err != nil {
		return nil, "", degraded("KubeconfigInvalid", "kubeconfig Secret %s: %v", t.secret, err)
	}
	hc, err := r.hosted.Ensure(key, kubeconfig, svcKey)
	if err != nil {
		return nil, "", degraded("KubeconfigInvalid", "kubeconfig Secret %s: %v", t.secret, err)
	}
	return hc, apiBackend, nil
}

// applyServices applies the LoadBalancer Service and deletes the one this AppsIngress had under a previous cluster
// name, returning the applied Service as the hosted API server answered it.
func (r *Reconciler) applyServices(ctx context.Context, hc *hosted.Cluster, ai *v1alpha1.AppsIngress, key types.NamespacedName) (*corev1.Service, *failure) {
	svc, f := applyService(ctx, hc.Kube, ai, key)
	if f != nil {
		return nil, f
	}
	if err := deleteStaleServicesOnce(ctx, hc.Kube, ai, key); err != nil {
		if !isConnectionError(err) {
			return nil, degraded("StaleServiceNotDeleted", "deleting the Service this AppsIngress had under its previous cluster name: %v", err)
		}
		return nil, unreachable(err)
	}
	return svc, nil
}

// publish writes the entries next's status describes, and counts the render.
func (r *Reconciler) publish(ctx context.Context, ai, next *v1alpha1.AppsIngress) (published, error) {
	pub, err := r.publisher.publish(ctx, next)
	if err != nil {
		renders.WithLabelValues("error").Inc()
		return pub, err
	}
	if next != ai {
		renders.WithLabelValues("ok").Inc()
		ai.Status.ExternalIPs, ai.Status.APIEndpoint, ai.Status.APIBackend = next.Status.ExternalIPs, next.Status.APIEndpoint, next.Status.APIBackend
	}
	return pub, nil
}

// publishAndCheck publishes next's entry and asks every CoreDNS and HAProxy replica whether it serves it.
func (r *Reconciler) publishAndCheck(ctx context.Context, ai, next *v1alpha1.AppsIngress, o observed) (ctrl.Result, error) {
	before, _ := entry(ai)
	o.entry, _ = entry(next)
	// A changed entry is waited for here a little (servedWait): the servers usually load it within a second, and a
	// status written in between, then a requeue through a busy queue, would cost a fleet being created a status
	// write, an Event and a reconcile per object, and each object seconds. An unchanged one (a Ready object's
	// recheck, an object already waiting) is asked once: during an outage of the servers, a fleet of rechecks would
	// otherwise hold every worker.
	changed := !o.waiting && !reflect.DeepEqual(before, o.entry)
	pub, err := r.publish(ctx, ai, next)
	if o.configWrite = err; err != nil {
		return r.conclude(ai, o), nil
	}
	deadline := time.Now()
	if changed {
		deadline = deadline.Add(r.servedWait)
	}
	for {
		if o.served, err = r.observeServed(ctx, ai, o.entry, pub); err != nil {
			return ctrl.Result{}, err
		}
		if (o.served.dnsOK && o.served.proxyOK) || o.served.proxyRejected || !time.Now().Before(deadline) {
			return r.conclude(ai, o), nil
		}
		select {
		case <-ctx.Done():
			return ctrl.Result{}, ctx.Err()
		case <-time.After(servedPoll):
		}
	}
}

// servedPoll is how often a new entry's servers are asked while the reconcile waits for them (servedWait).
const servedPoll = 100 * time.Millisecond

// observeServed asks what every replica serves of entry c. A CoreDNS replica that keeps not serving it is asked to
// reload (repairDNS), which the DNS message then says.
func (r *Reconciler) observeServed(ctx context.Context, ai *v1alpha1.AppsIngress, c routes.Cluster, pub published) (servedState, error) {
	var s servedState
	var lagging netip.AddrPort
	var err error
	if s.dnsOK, lagging, s.dnsMsg, err = r.check.dnsServes(ctx, c, pub.proxyIPs); err != nil {
		return s, err
	}
	if !s.dnsOK && lagging.IsValid() {
		// Unanswered, the generation is "": a replica that keeps not answering counts as not moving.
		gen, _ := r.check.dnsGeneration(ctx, lagging)
		if s.dnsMsg, err = r.repairDNS(ctx, ai, lagging, gen, s.dnsMsg); err != nil {
			return s, err
		}
	}
	s.proxyOK, s.proxyRejected, s.proxyMsg, err = r.check.proxyServes(ctx, pub.proxyWants(c.Key), r.publisher.proxyCurrent(r.publisher.entrySince(c.Key, pub)))
	return s, err
}

// conclude sets the status decide gives for o, and when to look again.
func (r *Reconciler) conclude(ai *v1alpha1.AppsIngress, o observed) ctrl.Result {
	d := decide(o)
	for _, c := range d.conditions {
		setCondition(ai, c.typ, c.status, c.reason, c.message)
	}
	setPhase(ai, d.phase, d.reason, d.message)
	switch d.then {
	case never:
		return ctrl.Result{}
	case resync:
		// The Service watch brings the IP; the slow resync only covers a missed event.
		return ctrl.Result{RequeueAfter: r.slowResync}
	case poll:
		return ctrl.Result{RequeueAfter: r.pollAfter(ai)}
	case recheck:
		// Jittered, so that objects made Ready together are not all checked again at once.
		return ctrl.Result{RequeueAfter: r.recheck + rand.N(r.recheck/10+1)}
	}
	if strings.HasPrefix(d.reason, "HostedCluster") {
		hostedClientErrors.WithLabelValues(ai.Namespace, ai.Name, d.reason).Inc()
	}
	//nolint:staticcheck // Requeue goes through the rate limiter: per-object exponential backoff, capped.
	return ctrl.Result{Requeue: true}
}
