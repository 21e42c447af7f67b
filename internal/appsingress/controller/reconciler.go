// Package controller reconciles AppsIngress objects: for each, a LoadBalancer Service in the hosted cluster
// (server-side applied through the HostedCluster's kubeconfig), its external IP(s) read from a per-cluster watch, and
// the cluster's entries in the shared CoreDNS and HAProxy ConfigMaps.
package controller

import (
	"context"
	"errors"
	"slices"
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
)

// Finalizer holds an AppsIngress until its Service and entries are gone.
const Finalizer = "hostedcluster.virtual-ingress.io/cleanup"

// Reconciler is the AppsIngress controller.
type Reconciler struct {
	client client.Client
	reader client.Reader
	// live reads from the API server: the copy a status write that conflicted is rebased onto.
	live      client.Reader
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
	// servedWait is how long a reconcile that published a new entry waits for the servers to serve it.
	servedWait time.Duration
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
	before, requeue, err := r.writeStatus(ctx, orig, ai)
	if err != nil {
		reconcileResults.WithLabelValues("error").Inc()
		return ctrl.Result{}, err
	}
	if requeue {
		return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // through the rate limiter, as fail does
	}
	recordPhase(ai)
	reconcileResults.WithLabelValues(string(ai.Status.Phase)).Inc()
	if ai.Status.Phase != before.Status.Phase || ai.Status.Reason != before.Status.Reason {
		typ := corev1.EventTypeNormal
		if ai.Status.Phase == v1alpha1.PhaseDegraded {
			typ = corev1.EventTypeWarning
		}
		r.recorder.Eventf(ai, nil, typ, ai.Status.Reason, "Reconcile", "%s: %s", ai.Status.Phase, ai.Status.Message)
	}
	return res, nil
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
