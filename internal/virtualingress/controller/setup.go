// Package controller is virtual-ingress's status controller. Kyverno's policies resolve VirtualIngresses
// (VirtualHTTPRoutes) and generate their Ingresses (HTTPRoutes); this controller checks the result: it sets the Ready
// condition (True only when the generated object exists, was generated from its source and holds status.ingress.spec
// (status.route.spec) and the labels and annotations the policies copy, and for a route every parent Gateway accepted
// it), summarises a route's status.parents, records an Event on each change, surfaces why Kyverno failed to generate
// (its UpdateRequests), and repairs what Kyverno dropped under load by writing the source again. It never writes
// Ingresses or HTTPRoutes.
package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Options configures the controller; zero values take the defaults.
type Options struct {
	// KyvernoNamespace holds Kyverno's UpdateRequests. Default kyverno.
	KyvernoNamespace string
	// NameSuffix is the chart's generatedIngress.nameSuffix: an Ingress named <VirtualIngress><suffix> concerns it.
	NameSuffix string
	// ExcludedLabels and ExcludedAnnotations are the chart's generatedIngress.excludedLabels and excludedAnnotations:
	// the source's labels and annotations the generated object does not get. Ready compares the others.
	ExcludedLabels      []string
	ExcludedAnnotations []string
	// OnMultipleMatches is the chart's serviceDiscovery.onMultipleMatches (error or oldest). Default error.
	OnMultipleMatches string
	// Grace is how long a missing or outdated Ingress (Kyverno still generating) goes unreported; a resolved source's
	// missing first Ingress, with no request pending in Kyverno, is repaired then too (verdict.first). Default 5 s.
	Grace time.Duration
	// PendingGrace is how long a VirtualIngress with no Ready condition yet goes unreported while Kyverno still
	// holds a request to generate its Ingress. Default 5 min.
	PendingGrace time.Duration
	// RepairAfter is how long a divergence lasts, with no request pending in Kyverno, before the VirtualIngress is
	// written again; later repairs of the same divergence wait twice as long each time. Default 30 s.
	RepairAfter time.Duration
	// LagRepairAfter replaces RepairAfter for a resolution that lags behind the Services toward a Service (a backend's
	// status does not name the Service the Services now resolve it to; a Service that went away waits for RepairAfter,
	// see verdict.urgent): Kyverno follows a Service event within a second, so a lag that outlasts this
	// is an event Kyverno never got or cannot follow (a Service created with generateName reaches the generatingPolicy
	// engine without a name), or one whose VirtualIngress and Service were applied together and missed each other.
	// Default 1 s. (A resolved source's missing first Ingress is repaired with its report, after Grace: verdict.first.)
	LagRepairAfter time.Duration
	// MaxRepairBackoff caps the wait between repairs. Default 10 min.
	MaxRepairBackoff time.Duration
	// UpdateRequestThreshold is Kyverno's updateRequestThreshold (its ConfigMap): with nine tenths of it in Kyverno's
	// namespace, repairs wait, since Kyverno would drop the requests they make. Default 1000, Kyverno's default.
	UpdateRequestThreshold int
	// Resync re-checks every VirtualIngress this often even without events. Default 10 min.
	Resync time.Duration
	// MaxConcurrentReconciles of each kind. Default 2.
	MaxConcurrentReconciles int
	// Routes checks VirtualHTTPRoutes too; the cluster must serve Gateway API's HTTPRoute (the chart sets it when it
	// renders the route policies).
	Routes bool
	// Clock for tests. Default the real clock.
	Clock clock.Clock
	// SkipNameValidation lets a process start the controller more than once (tests that restart it).
	SkipNameValidation bool
}

func (o *Options) defaults() error {
	if o.KyvernoNamespace == "" {
		o.KyvernoNamespace = "kyverno"
	}
	switch o.OnMultipleMatches {
	case "":
		o.OnMultipleMatches = OnMultipleMatchesError
	case OnMultipleMatchesError, OnMultipleMatchesOldest:
	default:
		return fmt.Errorf("on-multiple-matches %q: want %s or %s", o.OnMultipleMatches, OnMultipleMatchesError, OnMultipleMatchesOldest)
	}
	setDefault(&o.Grace, 5*time.Second)
	setDefault(&o.PendingGrace, 5*time.Minute)
	setDefault(&o.RepairAfter, 30*time.Second)
	setDefault(&o.LagRepairAfter, time.Second)
	setDefault(&o.MaxRepairBackoff, 10*time.Minute)
	setDefault(&o.Resync, 10*time.Minute)
	if o.UpdateRequestThreshold <= 0 {
		o.UpdateRequestThreshold = 1000
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 2
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return nil
}

func setDefault(d *time.Duration, value time.Duration) {
	if *d <= 0 {
		*d = value
	}
}

// CacheOptions keeps the manager's cache of UpdateRequests to Kyverno's namespace, the only one the controller may
// read them in.
func CacheOptions(kyvernoNamespace string) cache.Options {
	if kyvernoNamespace == "" {
		kyvernoNamespace = "kyverno"
	}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		newUpdateRequest(): {Namespaces: map[string]cache.Config{kyvernoNamespace: {}}},
	}}
}

// ClientOptions makes the manager's client read unstructured objects (the sources, HTTPRoutes, UpdateRequests) from the
// cache too: controller-runtime otherwise sends those reads to the API server, which knows no field index.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{Unstructured: true}}
}

// Setup adds the controller to mgr, whose cache and client must be built with CacheOptions and ClientOptions.
func Setup(mgr ctrl.Manager, opts Options) error {
	if err := opts.defaults(); err != nil {
		return err
	}
	ctx := context.Background()
	if err := mgr.GetFieldIndexer().IndexField(ctx, newUpdateRequest(), triggerIndex, updateRequestTrigger); err != nil {
		return err
	}
	kinds := []*sourceKind{virtualIngressKind}
	if opts.Routes {
		kinds = append(kinds, virtualHTTPRouteKind)
	}
	for _, k := range kinds {
		if err := mgr.GetFieldIndexer().IndexField(ctx, k.newSource(), serviceIndex, k.serviceKeys); err != nil {
			return err
		}
		r := &Reconciler{
			kind:     k,
			client:   mgr.GetClient(),
			recorder: mgr.GetEventRecorder("virtual-ingress-controller"),
			opts:     opts,
			clock:    opts.Clock,
			copied:   newCopied(opts.ExcludedLabels, opts.ExcludedAnnotations),
			tracked:  map[types.UID]*divergence{},
		}
		m := mapper{kind: k, client: mgr.GetClient(), suffix: opts.NameSuffix}
		err := ctrl.NewControllerManagedBy(mgr).
			Named(strings.ToLower(k.gvk.Kind)).
			For(k.newSource()).
			Watches(k.newGenerated(), handler.EnqueueRequestsFromMapFunc(m.generated)).
			Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(m.service)).
			Watches(newUpdateRequest(), handler.EnqueueRequestsFromMapFunc(m.updateRequest)).
			WithOptions(controller.Options{
				MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
				SkipNameValidation:      &opts.SkipNameValidation,
			}).
			Complete(r)
		if err != nil {
			return err
		}
	}
	return nil
}

// mapper finds the objects of one kind an event concerns.
type mapper struct {
	kind   *sourceKind
	client client.Client
	suffix string
}

// generated: the source it was generated from, and the one whose generated name it holds (which may be another's).
func (m mapper) generated(_ context.Context, obj client.Object) []reconcile.Request {
	var out []reconcile.Request
	if name := obj.GetLabels()[m.kind.backReferenceLabel]; name != "" {
		out = append(out, request(obj.GetNamespace(), name))
	}
	if name, ok := strings.CutSuffix(obj.GetName(), m.suffix); ok && name != "" {
		out = append(out, request(obj.GetNamespace(), name))
	}
	return out
}

func (m mapper) updateRequest(_ context.Context, obj client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, key := range updateRequestTrigger(obj) {
		kind, rest, _ := strings.Cut(key, "/")
		if kind != m.kind.gvk.Kind {
			continue
		}
		ns, name, _ := strings.Cut(rest, "/")
		out = append(out, request(ns, name))
	}
	return out
}

func request(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}
