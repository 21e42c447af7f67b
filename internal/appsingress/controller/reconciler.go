// Package controller reconciles AppsIngress objects: for each, a LoadBalancer Service in the hosted cluster
// (server-side applied through the HostedCluster's kubeconfig), its external IP(s) read from a per-cluster watch, and
// the cluster's entries in the shared CoreDNS and HAProxy ConfigMaps.
package controller

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/hosted"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
)

// Finalizer holds an AppsIngress until its Service and entries are gone.
const Finalizer = "hostedcluster.virtual-ingress.io/cleanup"

// Reconciler is the AppsIngress controller.
type Reconciler struct {
	client    client.Client
	reader    client.Reader
	hosted    *hosted.Registry
	publisher *publisher
	recorder  events.EventRecorder
	// cleanupTimeout bounds how long a deletion keeps trying to delete the hosted Service.
	cleanupTimeout time.Duration
	// slowResync re-checks Pending objects although events are expected, in case one was missed.
	slowResync time.Duration
	// check asks CoreDNS and HAProxy what they serve; loadPoll is how often an object waiting for them asks again,
	// recheck how often a Ready object is checked again.
	check             *loadCheck
	loadPoll, recheck time.Duration
	// dnsRepairAfter is how long an entry may go unserved by a CoreDNS replica whose configuration does not move
	// before a reload is requested; generations is what each replica was seen running.
	dnsRepairAfter time.Duration
	generations    servedGenerations
	controlPlane   controlPlane
	now            func() time.Time
}

// Reconcile brings one AppsIngress to its desired state and reports it in its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ai := &v1alpha1.AppsIngress{}
	if err := r.client.Get(ctx, req.NamespacedName, ai); err != nil {
		if apierrors.IsNotFound(err) {
			r.hosted.Stop(req.NamespacedName)
			forgetPhase(req.Namespace, req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !ai.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, ai)
	}
	if !controllerutil.ContainsFinalizer(ai, Finalizer) {
		patch := client.MergeFrom(ai.DeepCopy())
		controllerutil.AddFinalizer(ai, Finalizer)
		if err := r.client.Patch(ctx, ai, patch); err != nil {
			return ctrl.Result{}, err
		}
	}

	orig := ai.DeepCopy()
	ensureConditions(ai)
	res, err := r.sync(ctx, ai)
	if err != nil {
		reconcileResults.WithLabelValues("error").Inc()
		return ctrl.Result{}, err
	}
	ai.Status.ObservedGeneration = ai.Generation
	now := metav1.NewTime(r.now())
	ai.Status.LastSyncTime = &now
	// With the resourceVersion the status was computed from: a merge patch against a stale cached copy leaves out the
	// fields that copy already had, so phase and reason could stay as an unseen write left them while the message
	// moved on. A conflict retries with the fresh object.
	if err := r.client.Status().Patch(ctx, ai, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // through the rate limiter, as fail does
		}
		reconcileResults.WithLabelValues("error").Inc()
		return ctrl.Result{}, err
	}
	recordPhase(ai)
	reconcileResults.WithLabelValues(string(ai.Status.Phase)).Inc()
	if ai.Status.Phase != orig.Status.Phase || ai.Status.Reason != orig.Status.Reason {
		typ := corev1.EventTypeNormal
		if ai.Status.Phase == v1alpha1.PhaseDegraded {
			typ = corev1.EventTypeWarning
		}
		r.recorder.Eventf(ai, nil, typ, ai.Status.Reason, "Reconcile", "%s: %s", ai.Status.Phase, ai.Status.Message)
	}
	return res, nil
}

// sync does the work and sets the status; the result asks for a retry where the state should move on its own.
func (r *Reconciler) sync(ctx context.Context, ai *v1alpha1.AppsIngress) (ctrl.Result, error) {
	key := types.NamespacedName{Namespace: ai.Namespace, Name: ai.Name}
	if ai.Spec.Suspend {
		// The hosted cluster is left alone and the entries stay as they are (publish is not called).
		r.hosted.Stop(key)
		setPhase(ai, v1alpha1.PhasePending, "Suspended", "spec.suspend is true: nothing is reconciled; DNS and proxy entries keep their last state")
		return ctrl.Result{}, nil
	}

	t, f := resolveTarget(ctx, r.reader, ai)
	if f != nil {
		setCondition(ai, CondHostedClusterReachable, metav1.ConditionFalse, f.reason, f.message)
		if f.reason == "KubeconfigMissing" || f.reason == "HostedClusterNotFound" {
			r.hosted.Stop(key)
		}
		if f.reason == "HostedClusterNotFound" && (len(ai.Status.ExternalIPs) > 0 || ai.Status.APIEndpoint != "") {
			// A deleted hosted cluster is not a passing failure: its names must stop answering, unlike the last good
			// entries a cluster that cannot be reached keeps.
			ai.Status.ExternalIPs, ai.Status.APIEndpoint, ai.Status.APIBackend = nil, "", ""
			if _, err := r.publisher.publish(ctx, ai); err != nil {
				return ctrl.Result{}, err
			}
			setCondition(ai, CondDNSConfigured, metav1.ConditionFalse, f.reason, "the entries were removed with the HostedCluster")
			setCondition(ai, CondProxyConfigured, metav1.ConditionFalse, f.reason, "the entries were removed with the HostedCluster")
		}
		return r.fail(ai, f)
	}
	svcKey := serviceKey(ai, clusterName(ai))
	if t.apiEndpoint == "" {
		if cfg, err := r.hosted.RESTConfig(t.kubeconfig); err == nil {
			t.apiEndpoint = endpointFromServer(cfg.Host)
		}
	}
	kubeconfig, apiBackend, err := r.reach(ctx, ai, t)
	if err != nil {
		f := degraded("KubeconfigInvalid", "kubeconfig Secret %s: %v", t.secret, err)
		setCondition(ai, CondHostedClusterReachable, metav1.ConditionFalse, f.reason, f.message)
		return r.fail(ai, f)
	}
	hc, err := r.hosted.Ensure(key, kubeconfig, svcKey)
	if err != nil {
		f := degraded("KubeconfigInvalid", "kubeconfig Secret %s: %v", t.secret, err)
		setCondition(ai, CondHostedClusterReachable, metav1.ConditionFalse, f.reason, f.message)
		return r.fail(ai, f)
	}

	if r.onlyWaiting(ai, hc) {
		// Nothing has changed since the entry was published: ask the servers again without a round of requests to
		// the hosted cluster, so that a fleet waiting for them costs the hosted API servers nothing.
		c, _ := entry(ai)
		pub, err := r.publisher.publish(ctx, ai)
		if err != nil {
			return r.configWriteFailed(ai, err)
		}
		return r.checkServed(ctx, ai, c, pub)
	}

	if f := checkMetalLBCached(ctx, hc, ai.Spec.MetalLB); f != nil {
		if f.reason == "HostedClusterUnreachable" || f.reason == "HostedClusterAccessDenied" {
			setCondition(ai, CondHostedClusterReachable, metav1.ConditionFalse, f.reason, f.message)
		} else {
			setCondition(ai, CondHostedClusterReachable, metav1.ConditionTrue, "Reachable", "the hosted cluster's API server answers")
			setCondition(ai, CondServiceReady, metav1.ConditionFalse, f.reason, f.message)
		}
		return r.fail(ai, f)
	}
	setCondition(ai, CondHostedClusterReachable, metav1.ConditionTrue, "Reachable", "the hosted cluster's API server answers")

	svc, f := applyService(ctx, hc.Kube, ai, svcKey)
	if f != nil {
		if f.reason == "HostedClusterUnreachable" {
			setCondition(ai, CondHostedClusterReachable, metav1.ConditionFalse, f.reason, f.message)
		}
		setCondition(ai, CondServiceReady, metav1.ConditionFalse, f.reason, f.message)
		return r.fail(ai, f)
	}
	if err := deleteStaleServicesOnce(ctx, hc.Kube, ai, svcKey); err != nil {
		f := unreachable(err)
		if !isConnectionError(err) {
			f = degraded("StaleServiceNotDeleted", "deleting the Service this AppsIngress had under its previous cluster name: %v", err)
		}
		setCondition(ai, CondServiceReady, metav1.ConditionFalse, f.reason, f.message)
		return r.fail(ai, f)
	}
	setCondition(ai, CondServiceReady, metav1.ConditionTrue, "Applied", fmt.Sprintf("LoadBalancer Service %s applied", svcKey))

	ips := externalIPs(svc)
	if len(ips) == 0 {
		// The API does not depend on the apps Service: its name is published at once.
		if t.apiEndpoint != ai.Status.APIEndpoint || apiBackend != ai.Status.APIBackend {
			next := ai.DeepCopy()
			next.Status.APIEndpoint, next.Status.APIBackend = t.apiEndpoint, apiBackend
			if _, err := r.publisher.publish(ctx, next); err != nil {
				return r.configWriteFailed(ai, err)
			}
			ai.Status.APIEndpoint, ai.Status.APIBackend = t.apiEndpoint, apiBackend
		}
		f := pending("ExternalIPPending", "Service %s has no load-balancer IP yet (MetalLB assigns it)", svcKey)
		setCondition(ai, CondExternalIPAssigned, metav1.ConditionFalse, f.reason, f.message)
		// The Service watch brings the IP; the slow resync only covers a missed event.
		setPhase(ai, f.phase, f.reason, f.message)
		return ctrl.Result{RequeueAfter: r.slowResync}, nil
	}
	ipStrings := make([]string, len(ips))
	for i, ip := range ips {
		ipStrings[i] = ip.String()
	}
	if outside := outsideRanges(ips, ai.Spec.MetalLB.IPAddressPoolRanges); len(outside) > 0 {
		setCondition(ai, CondExternalIPAssigned, metav1.ConditionTrue, "OutsidePoolRanges",
			fmt.Sprintf("%s outside spec.metallb.ipAddressPoolRanges %s (not enforced)", strings.Join(outside, ", "), strings.Join(ai.Spec.MetalLB.IPAddressPoolRanges, ", ")))
	} else {
		setCondition(ai, CondExternalIPAssigned, metav1.ConditionTrue, "Assigned", strings.Join(ipStrings, ", "))
	}

	next := ai.DeepCopy()
	next.Status.ExternalIPs = ipStrings
	next.Status.APIEndpoint, next.Status.APIBackend = t.apiEndpoint, apiBackend
	pub, err := r.publisher.publish(ctx, next)
	if err != nil {
		return r.configWriteFailed(ai, err)
	}
	renders.WithLabelValues("ok").Inc()
	ai.Status.ExternalIPs, ai.Status.APIEndpoint, ai.Status.APIBackend = ipStrings, t.apiEndpoint, apiBackend
	c, _ := entry(next)
	return r.checkServed(ctx, ai, c, pub)
}

// onlyWaiting says whether ai's last reconcile published its entry and is waiting for the servers, with nothing
// changed since: its spec observed, its hosted Service's addresses (as the watch sees them) the published ones.
func (r *Reconciler) onlyWaiting(ai *v1alpha1.AppsIngress, hc *hosted.Cluster) bool {
	if ai.Status.Reason != "ConfigNotServedYet" || ai.Status.ObservedGeneration != ai.Generation {
		return false
	}
	svc := hc.Watched()
	if svc == nil {
		return false
	}
	ips := externalIPs(svc)
	if len(ips) != len(ai.Status.ExternalIPs) {
		return false
	}
	for i, ip := range ips {
		if ip.String() != ai.Status.ExternalIPs[i] {
			return false
		}
	}
	return true
}

// pollAfter is when an object waiting for the servers asks again: every loadPoll at first, then less often the
// longer it has waited (a quarter of the wait, 10 s at most), so that a fleet waiting for a slow kubelet does not
// keep the workers busy.
func (r *Reconciler) pollAfter(ai *v1alpha1.AppsIngress) time.Duration {
	after := r.loadPoll
	for _, typ := range []string{CondDNSConfigured, CondProxyConfigured} {
		c := meta.FindStatusCondition(ai.Status.Conditions, typ)
		if c != nil && c.Status == metav1.ConditionFalse {
			after = max(after, min(r.now().Sub(c.LastTransitionTime.Time)/4, 10*time.Second))
		}
	}
	return after
}

func (r *Reconciler) configWriteFailed(ai *v1alpha1.AppsIngress, err error) (ctrl.Result, error) {
	renders.WithLabelValues("error").Inc()
	f := degraded("ConfigWriteFailed", "%v", err)
	setCondition(ai, CondDNSConfigured, metav1.ConditionFalse, f.reason, f.message)
	setCondition(ai, CondProxyConfigured, metav1.ConditionFalse, f.reason, f.message)
	return r.fail(ai, f)
}

// checkServed sets DNSConfigured and ProxyConfigured from what every CoreDNS and HAProxy replica serves, and the
// phase from both: Ready only once all of them serve this entry. A Ready object is checked again after recheck, so
// that a hosted cluster gone unreachable, or a replica serving something else, shows without any event.
func (r *Reconciler) checkServed(ctx context.Context, ai *v1alpha1.AppsIngress, c routes.Cluster, pub published) (ctrl.Result, error) {
	dnsOK, lagging, dnsMsg, err := r.check.dnsServes(ctx, c, pub.proxyIPs)
	if err != nil {
		return ctrl.Result{}, err
	}
	if dnsOK {
		setCondition(ai, CondDNSConfigured, metav1.ConditionTrue, "Served", dnsMsg)
	} else {
		if lagging.IsValid() {
			// Unanswered, the generation is "": a replica that keeps not answering counts as not moving.
			gen, _ := r.check.dnsGeneration(ctx, lagging)
			if dnsMsg, err = r.repairDNS(ctx, ai, lagging, gen, dnsMsg); err != nil {
				return ctrl.Result{}, err
			}
		}
		setCondition(ai, CondDNSConfigured, metav1.ConditionFalse, "NotServedYet", dnsMsg)
	}
	proxyOK, rejected, proxyMsg, err := r.check.proxyServes(ctx, pub.proxyWants(c.Key), r.publisher.proxyCurrent(r.publisher.entrySince(c.Key, pub)))
	if err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case proxyOK:
		setCondition(ai, CondProxyConfigured, metav1.ConditionTrue, "Loaded", proxyMsg)
	case rejected:
		setCondition(ai, CondProxyConfigured, metav1.ConditionFalse, "ConfigRejected", proxyMsg)
		return r.fail(ai, degraded("ConfigRejected", "%s", proxyMsg))
	default:
		setCondition(ai, CondProxyConfigured, metav1.ConditionFalse, "NotLoadedYet", proxyMsg)
	}
	if !dnsOK || !proxyOK {
		var waiting []string
		if !dnsOK {
			waiting = append(waiting, dnsMsg)
		}
		if !proxyOK {
			waiting = append(waiting, proxyMsg)
		}
		setPhase(ai, v1alpha1.PhasePending, "ConfigNotServedYet", strings.Join(waiting, "; "))
		return ctrl.Result{RequeueAfter: r.pollAfter(ai)}, nil
	}
	setPhase(ai, v1alpha1.PhaseReady, "Ready", fmt.Sprintf("*.apps.%s.%s served at %s", c.Name, c.BaseDomain, strings.Join(ai.Status.ExternalIPs, ", ")))
	// Jittered, so that objects made Ready together are not all checked again at once.
	return ctrl.Result{RequeueAfter: r.recheck + rand.N(r.recheck/10+1)}, nil
}

// fail records f and asks for a retry with the controller's exponential backoff; the DNS and proxy entries keep
// the last good state because the status's externalIPs are left as they were.
func (r *Reconciler) fail(ai *v1alpha1.AppsIngress, f *failure) (ctrl.Result, error) {
	if strings.HasPrefix(f.reason, "HostedCluster") {
		hostedClientErrors.WithLabelValues(ai.Namespace, ai.Name, f.reason).Inc()
	}
	setPhase(ai, f.phase, f.reason, f.message)
	//nolint:staticcheck // Requeue goes through the rate limiter: per-object exponential backoff, capped.
	return ctrl.Result{Requeue: true}, nil
}

// finalize removes the entries at once, then the hosted Service; a hosted cluster that cannot be reached delays the
// deletion by cleanupTimeout at most, after which the Service is left behind (and an Event says so).
func (r *Reconciler) finalize(ctx context.Context, ai *v1alpha1.AppsIngress) (ctrl.Result, error) {
	key := types.NamespacedName{Namespace: ai.Namespace, Name: ai.Name}
	if !controllerutil.ContainsFinalizer(ai, Finalizer) {
		r.hosted.Stop(key)
		return ctrl.Result{}, nil
	}
	if _, err := r.publisher.publish(ctx, ai); err != nil {
		return ctrl.Result{}, err
	}
	r.hosted.Stop(key)
	if err := r.deleteHostedService(ctx, ai); err != nil {
		// Without the HostedCluster or its kubeconfig there is no way to the Service: waiting cannot help.
		gone := false
		var f *failure
		if errors.As(err, &f) {
			gone = f.reason == "HostedClusterNotFound" || f.reason == "KubeconfigMissing"
		}
		if !gone && r.now().Sub(ai.DeletionTimestamp.Time) < r.cleanupTimeout {
			logf.FromContext(ctx).Info("hosted Service not deleted yet; retrying", "error", err.Error())
			//nolint:staticcheck // Requeue goes through the rate limiter: exponential backoff.
			return ctrl.Result{Requeue: true}, nil
		}
		r.recorder.Eventf(ai, nil, corev1.EventTypeWarning, "ServiceLeftBehind", "Cleanup",
			"gave up deleting the hosted cluster's Service after %s: %v", r.cleanupTimeout, err)
	}
	patch := client.MergeFrom(ai.DeepCopy())
	ai.Finalizers = slices.DeleteFunc(ai.Finalizers, func(s string) bool { return s == Finalizer })
	if err := r.client.Patch(ctx, ai, patch); err != nil {
		return ctrl.Result{}, err
	}
	forgetPhase(ai.Namespace, ai.Name)
	return ctrl.Result{}, nil
}

// reach is the kubeconfig the operator uses for the hosted cluster, and the proxy's API backend when that is not
// the published endpoint: through the control plane's Service when the hosted control plane namespace has one.
func (r *Reconciler) reach(ctx context.Context, ai *v1alpha1.AppsIngress, t *target) ([]byte, string, error) {
	backend := r.controlPlane.backend(ctx, hostedClusterKey(ai))
	if backend == "" {
		return t.kubeconfig, "", nil
	}
	kubeconfig, err := throughService(t.kubeconfig, backend)
	return kubeconfig, backend, err
}

func (r *Reconciler) deleteHostedService(ctx context.Context, ai *v1alpha1.AppsIngress) error {
	t, f := resolveTarget(ctx, r.reader, ai)
	if f != nil {
		return f
	}
	kubeconfig, _, err := r.reach(ctx, ai, t)
	if err != nil {
		return err
	}
	cfg, err := r.hosted.RESTConfig(kubeconfig)
	if err != nil {
		return err
	}
	kube, err := newKube(cfg)
	if err != nil {
		return err
	}
	return deleteService(ctx, kube, ai, serviceKey(ai, clusterName(ai)))
}
