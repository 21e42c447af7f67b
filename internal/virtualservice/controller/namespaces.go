package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/config"
)

// namespaces runs one informer cache per namespace of the configuration in force: the production namespace
// (Services, VirtualServices) and each developer namespace (Services, EndpointSlices). Caches come and go with
// ConfigMap edits, without a restart, and each needs only namespace-scoped RBAC (list/watch in that namespace).
// A namespace whose cache cannot sync (no RBAC, say) is reported instead of blocking the others.
type namespaces struct {
	newCache    func(ns string, onError func(error)) (cache.Cache, error)
	store       *Store
	ctrl        controller.Controller
	vsPrototype func() *unstructured.Unstructured
	syncTimeout time.Duration
	// batchWindow delays the reconciles that watch events ask for (see enqueueAfter). Every watched kind goes through
	// it: a new production Service's developer copies usually arrive with it, and the echo of the operator's own write
	// must not start a reconcile while the rest of a batch is still arriving.
	batchWindow time.Duration

	mu     sync.Mutex
	caches map[string]*nsCache
	queue  workqueue.TypedRateLimitingInterface[reconcile.Request]
}

type role int

const (
	roleProduction role = iota
	roleDeveloper
)

type nsCache struct {
	role   role
	cache  cache.Cache
	cancel context.CancelFunc

	mu      sync.Mutex
	synced  bool
	failed  bool // not synced within syncTimeout: reported as unreadable instead of waited for
	lastErr error
}

func (c *nsCache) state() (synced, failed bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.synced, c.failed, c.lastErr
}

func (c *nsCache) setErr(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr = err
}

// NeedLeaderElection: only the leader watches Services and writes VirtualServices.
func (n *namespaces) NeedLeaderElection() bool { return true }

// Start follows the configuration until ctx ends.
func (n *namespaces) Start(ctx context.Context) error {
	changes := n.store.Watch()
	for {
		select {
		case <-ctx.Done():
			n.mu.Lock()
			for ns, c := range n.caches {
				c.cancel()
				delete(n.caches, ns)
			}
			n.mu.Unlock()
			return nil
		case <-changes:
			if cfg := n.store.Current(); cfg != nil {
				n.reconfigure(ctx, cfg)
			}
		}
	}
}

// queueSource hands the controller's queue to namespaces, which enqueues every production Service after a
// configuration change.
func (n *namespaces) queueSource() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.queue = q
		return nil
	})
}

func (n *namespaces) reconfigure(ctx context.Context, cfg *config.Config) {
	want := map[string]role{cfg.DefaultNamespace: roleProduction}
	for _, ns := range cfg.DeveloperNamespaces {
		want[ns] = roleDeveloper
	}
	n.mu.Lock()
	for ns, c := range n.caches {
		if r, ok := want[ns]; !ok || r != c.role {
			c.cancel()
			delete(n.caches, ns)
		}
	}
	for ns, r := range want {
		if _, ok := n.caches[ns]; ok {
			continue
		}
		c, err := n.start(ctx, ns, r)
		if err != nil {
			log.FromContext(ctx).Error(err, "cannot start the cache of a namespace", "namespace", ns)
			continue
		}
		n.caches[ns] = c
	}
	n.mu.Unlock()
	// Services whose routes do not change need no write: the reconciler compares before writing.
	n.enqueueAll(ctx)
}

func (n *namespaces) start(ctx context.Context, ns string, r role) (*nsCache, error) {
	c := &nsCache{role: r}
	cc, err := n.newCache(ns, c.setErr)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	c.cache, c.cancel = cc, cancel
	objs := []client.Object{&corev1.Service{}}
	if r == roleProduction {
		objs = append(objs, n.vsPrototype())
	} else {
		objs = append(objs, &discoveryv1.EndpointSlice{})
	}
	for _, o := range objs {
		if _, err := cc.GetInformer(cctx, o, cache.BlockUntilSynced(false)); err != nil {
			cancel()
			return nil, fmt.Errorf("informer for %T in %s: %w", o, ns, err)
		}
	}
	go func() {
		if err := cc.Start(cctx); err != nil {
			c.setErr(err)
		}
	}()
	go n.awaitSync(cctx, ns, c, objs)
	return c, nil
}

// awaitSync registers the namespace's watches with the controller only once its cache is synced: a controller
// waits for its sources to sync at start and fails when that times out, which one unreadable namespace must not cause.
func (n *namespaces) awaitSync(ctx context.Context, ns string, c *nsCache, objs []client.Object) {
	logger := log.FromContext(ctx).WithValues("namespace", ns)
	tctx, cancel := context.WithTimeout(ctx, n.syncTimeout)
	synced := c.cache.WaitForCacheSync(tctx)
	cancel()
	if !synced {
		if ctx.Err() != nil {
			return
		}
		c.mu.Lock()
		c.failed = true
		if c.lastErr == nil {
			c.lastErr = fmt.Errorf("cache not synced after %s", n.syncTimeout)
		}
		err := c.lastErr
		c.mu.Unlock()
		logger.Error(err, "namespace not readable; its routes are left out until it is", "after", n.syncTimeout)
		n.enqueueAll(ctx)
		if !c.cache.WaitForCacheSync(ctx) {
			return
		}
	}
	c.mu.Lock()
	c.synced, c.failed, c.lastErr = true, false, nil
	c.mu.Unlock()
	for _, o := range objs {
		if err := n.ctrl.Watch(source.Kind(c.cache, o, enqueueAfter(n.batchWindow, n.mapToService))); err != nil {
			logger.Error(err, "cannot watch", "type", fmt.Sprintf("%T", o))
		}
	}
	logger.V(1).Info("namespace cache synced")
	n.enqueueAll(ctx)
}

// mapToService maps any watched object to the production Service it concerns, by name: a Service of that name in any
// namespace, an EndpointSlice of it, or its VirtualService.
func (n *namespaces) mapToService(_ context.Context, o client.Object) []reconcile.Request {
	cfg := n.store.Current()
	if cfg == nil {
		return nil
	}
	var name string
	switch o.(type) {
	case *corev1.Service:
		name = o.GetName()
	case *discoveryv1.EndpointSlice:
		name = o.GetLabels()[discoveryv1.LabelServiceName]
	default:
		name = o.GetLabels()[LabelService]
	}
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: cfg.DefaultNamespace, Name: name}}}
}

func (n *namespaces) enqueueAll(ctx context.Context) {
	cfg := n.store.Current()
	n.mu.Lock()
	q, prod := n.queue, n.caches[cfg.DefaultNamespace]
	n.mu.Unlock()
	if q == nil || prod == nil {
		return
	}
	if synced, _, _ := prod.state(); !synced {
		return // its informer's initial list enqueues every Service once it syncs
	}
	var list corev1.ServiceList
	if err := prod.cache.List(ctx, &list, client.InNamespace(cfg.DefaultNamespace)); err != nil {
		log.FromContext(ctx).Error(err, "listing production Services")
		return
	}
	for _, s := range list.Items {
		q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
	}
}

// errNotReady is returned by reader while a namespace's cache is still filling.
type errNotReady struct{ ns string }

func (e errNotReady) Error() string { return "cache of namespace " + e.ns + " not synced yet" }

// reader returns the cache of ns once synced. A namespace that failed to sync gives its error with unreadable=true;
// one still syncing gives errNotReady.
func (n *namespaces) reader(ns string) (r client.Reader, unreadable bool, err error) {
	n.mu.Lock()
	c := n.caches[ns]
	n.mu.Unlock()
	if c == nil {
		return nil, false, errNotReady{ns}
	}
	synced, failed, lastErr := c.state()
	switch {
	case synced:
		return c.cache, false, nil
	case failed:
		return nil, true, lastErr
	default:
		return nil, false, errNotReady{ns}
	}
}

// watchErrorHandler keeps the informer's last error (a 403, typically) as the namespace's reported problem while
// still logging it as client-go does.
func watchErrorHandler(onError func(error)) toolscache.WatchErrorHandlerWithContext {
	return func(ctx context.Context, r *toolscache.Reflector, err error) {
		onError(err)
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	}
}
