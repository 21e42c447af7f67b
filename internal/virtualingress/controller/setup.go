// Package controller is virtual-ingress's status controller. Kyverno's policies resolve VirtualIngresses and generate
// their Ingresses; this controller checks the result: it sets the Ready condition (True only when the Ingress exists,
// was generated from the VirtualIngress and holds status.ingress.spec), records an Event on each change, surfaces why
// Kyverno failed to generate (its UpdateRequests), and repairs what Kyverno dropped under load by writing the
// VirtualIngress again. It never writes Ingresses.
package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	// OnMultipleMatches is the chart's serviceDiscovery.onMultipleMatches (error or oldest). Default error.
	OnMultipleMatches string
	// Grace is how long a missing or outdated Ingress (Kyverno still generating) goes unreported. Default 5 s.
	Grace time.Duration
	// RepairAfter is how long a divergence lasts, with no request pending in Kyverno, before the VirtualIngress is
	// written again; later repairs of the same divergence wait twice as long each time. Default 30 s.
	RepairAfter time.Duration
	// MaxRepairBackoff caps the wait between repairs. Default 10 min.
	MaxRepairBackoff time.Duration
	// UpdateRequestThreshold is Kyverno's updateRequestThreshold (its ConfigMap): with nine tenths of it in Kyverno's
	// namespace, repairs wait, since Kyverno would drop the requests they make. Default 1000, Kyverno's default.
	UpdateRequestThreshold int
	// Resync re-checks every VirtualIngress this often even without events. Default 10 min.
	Resync time.Duration
	// MaxConcurrentReconciles of VirtualIngresses. Default 2.
	MaxConcurrentReconciles int
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
	setDefault(&o.RepairAfter, 30*time.Second)
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

func newVirtualIngress() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GVK)
	return u
}

func newUpdateRequest() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(updateRequestGVK)
	return u
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

// ClientOptions makes the manager's client read unstructured objects (VirtualIngresses, UpdateRequests) from the
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
	if err := mgr.GetFieldIndexer().IndexField(ctx, newVirtualIngress(), serviceIndex, serviceKeys); err != nil {
		return err
	}
	r := &Reconciler{
		client:   mgr.GetClient(),
		recorder: mgr.GetEventRecorder("virtual-ingress-controller"),
		opts:     opts,
		clock:    opts.Clock,
		tracked:  map[types.UID]*divergence{},
	}
	m := mapper{client: mgr.GetClient(), suffix: opts.NameSuffix}
	return ctrl.NewControllerManagedBy(mgr).
		Named("virtualingress").
		For(newVirtualIngress()).
		Watches(&networkingv1.Ingress{}, handler.EnqueueRequestsFromMapFunc(m.ingress)).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(m.service)).
		Watches(newUpdateRequest(), handler.EnqueueRequestsFromMapFunc(m.updateRequest)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
			SkipNameValidation:      &opts.SkipNameValidation,
		}).
		Complete(r)
}

// mapper finds the VirtualIngresses an event concerns.
type mapper struct {
	client client.Client
	suffix string
}

// ingress: the VirtualIngress it was generated from, and the one whose Ingress name it holds (which may be another's).
func (m mapper) ingress(_ context.Context, obj client.Object) []reconcile.Request {
	var out []reconcile.Request
	if name := obj.GetLabels()["virtual-ingress.io/virtualingress"]; name != "" {
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
		ns, name, _ := strings.Cut(key, "/")
		out = append(out, request(ns, name))
	}
	return out
}

func request(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}
