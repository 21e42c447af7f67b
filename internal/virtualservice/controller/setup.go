// Package controller is the virtualservice-operator's controller: it loads the ConfigMap, follows Services and
// EndpointSlices in the production and developer namespaces, and keeps one VirtualService per production Service.
package controller

import (
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/config"
)

// Options configures Setup.
type Options struct {
	// ConfigMap holding config.yaml. Required.
	ConfigMap types.NamespacedName
	// IstioAPIVersion is the networking.istio.io version read and written. Default v1 (use v1beta1 or v1alpha3 for
	// Istio releases before 1.22).
	IstioAPIVersion string
	// MaxConcurrentReconciles of production Services. Default 4.
	MaxConcurrentReconciles int
	// ConflictBackoff paces retries of a write that hit a conflict. Default 1 s doubling, 6 attempts (waits of 1, 2,
	// 4, 8 and 16 s).
	ConflictBackoff wait.Backoff
	// NamespaceSyncTimeout is how long a namespace's cache may take to sync before the namespace is reported
	// unreadable and left out. Default 30 s.
	NamespaceSyncTimeout time.Duration
	// BatchWindow is how long the reconcile a watch event asks for waits, so that the events within it (ten developer
	// copies of a Service deployed together, each with its EndpointSlice) cost one write rather than one each.
	// Default DefaultBatchWindow; negative reconciles at once. Configuration changes are never delayed.
	BatchWindow time.Duration
}

// DefaultConflictBackoff is the retry schedule of a conflicting write.
var DefaultConflictBackoff = wait.Backoff{Duration: time.Second, Factor: 2, Steps: 6}

func (o *Options) defaults() error {
	if o.ConfigMap.Name == "" || o.ConfigMap.Namespace == "" {
		return fmt.Errorf("the ConfigMap's name and namespace are required")
	}
	if o.IstioAPIVersion == "" {
		o.IstioAPIVersion = "v1"
	}
	switch o.IstioAPIVersion {
	case "v1", "v1beta1", "v1alpha3":
	default:
		return fmt.Errorf("istio API version %q: want v1, v1beta1 or v1alpha3", o.IstioAPIVersion)
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 4
	}
	if o.ConflictBackoff.Steps == 0 {
		o.ConflictBackoff = DefaultConflictBackoff
	}
	if o.NamespaceSyncTimeout <= 0 {
		o.NamespaceSyncTimeout = 30 * time.Second
	}
	switch {
	case o.BatchWindow == 0:
		o.BatchWindow = DefaultBatchWindow
	case o.BatchWindow < 0:
		o.BatchWindow = 0
	}
	return nil
}

// ManagerCacheOptions restricts the manager's own cache to the one ConfigMap, so that the operator needs no
// cluster-wide read access; Services and friends go through per-namespace caches (see namespaces).
func ManagerCacheOptions(cm types.NamespacedName) cache.Options {
	return cache.Options{
		DefaultNamespaces: map[string]cache.Config{cm.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Field: fields.OneTermEqualSelector("metadata.name", cm.Name)},
		},
	}
}

// Setup adds the operator's controllers to mgr (built with ManagerCacheOptions) and a readiness check named "config"
// that fails while the ConfigMap is missing or invalid. It returns the configuration store.
func Setup(mgr ctrl.Manager, opts Options) (*Store, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	store := NewStore()
	if err := setupConfigController(mgr, opts.ConfigMap, store); err != nil {
		return nil, err
	}
	gvk := schema.GroupVersionKind{Group: config.IstioGroup, Version: opts.IstioAPIVersion, Kind: config.Kind}
	ns := &namespaces{
		store:       store,
		caches:      map[string]*nsCache{},
		syncTimeout: opts.NamespaceSyncTimeout,
		batchWindow: opts.BatchWindow,
		vsPrototype: func() *unstructured.Unstructured {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			return u
		},
		newCache: func(namespace string, onError func(error)) (cache.Cache, error) {
			return cache.New(mgr.GetConfig(), cache.Options{
				HTTPClient:               mgr.GetHTTPClient(),
				Scheme:                   mgr.GetScheme(),
				Mapper:                   mgr.GetRESTMapper(),
				DefaultNamespaces:        map[string]cache.Config{namespace: {}},
				DefaultTransform:         cache.TransformStripManagedFields(),
				DefaultWatchErrorHandler: watchErrorHandler(onError),
			})
		},
	}
	r := &serviceReconciler{
		store:    store,
		ns:       ns,
		writer:   mgr.GetClient(),
		live:     mgr.GetAPIReader(),
		recorder: mgr.GetEventRecorder(FieldManager),
		gvk:      gvk,
		backoff:  opts.ConflictBackoff,
		written:  newOwnWrites(),
	}
	c, err := controller.New("virtualservice-operator", mgr, controller.Options{
		Reconciler:              r,
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
	})
	if err != nil {
		return nil, err
	}
	ns.ctrl = c
	if err := c.Watch(ns.queueSource()); err != nil {
		return nil, err
	}
	if err := mgr.Add(ns); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("config", func(*http.Request) error { return store.Problem() }); err != nil {
		return nil, err
	}
	return store, nil
}
