// Package hosted keeps one API client and one Service informer per hosted cluster: the operator's view of the
// LoadBalancer Service it manages there. An informer is started with its AppsIngress, stopped with it, and
// restarted when the kubeconfig changes, so an external IP that MetalLB assigns reaches the controller as a watch
// event instead of being polled for.
package hosted

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is the connection to one hosted cluster.
type Cluster struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Service is where the managed Service is watched.
	Service types.NamespacedName

	hash     string
	stop     chan struct{}
	informer cache.SharedIndexInformer

	mu      sync.Mutex
	checked map[string]time.Time
}

// CheckedWithin says whether what was found in order (Checked) less than ttl ago: a check of the hosted cluster's
// configuration (MetalLB installed, the pool there) need not be a round of requests at every reconcile.
func (c *Cluster) CheckedWithin(what string, ttl time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.checked[what]
	return ok && time.Since(at) < ttl
}

// Checked records that what was found in order now.
func (c *Cluster) Checked(what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.checked == nil {
		c.checked = map[string]time.Time{}
	}
	c.checked[what] = time.Now()
}

// Synced reports whether the Service informer has listed once.
func (c *Cluster) Synced() bool { return c.informer.HasSynced() }

// Watched is the Service as the informer last saw it (nil when it does not exist or the informer has not synced).
func (c *Cluster) Watched() *corev1.Service {
	if !c.Synced() {
		return nil
	}
	obj, ok, err := c.informer.GetStore().GetByKey(c.Service.String())
	if err != nil || !ok {
		return nil
	}
	svc, _ := obj.(*corev1.Service)
	return svc
}

// Registry holds the Cluster of each AppsIngress.
type Registry struct {
	// Timeout bounds each request to a hosted cluster, so that an unreachable one fails a reconcile quickly.
	Timeout   time.Duration
	UserAgent string
	// OnChange is called with the AppsIngress's key when its Service changes in the hosted cluster.
	OnChange func(types.NamespacedName)

	mu       sync.Mutex
	clusters map[types.NamespacedName]*Cluster
}

// Ensure returns the Cluster for key, connected with kubeconfig and watching svc. An existing one is reused while
// both are unchanged; otherwise it is stopped and replaced (a rotated kubeconfig gets a new client and informer).
func (r *Registry) Ensure(key types.NamespacedName, kubeconfig []byte, svc types.NamespacedName) (*Cluster, error) {
	sum := sha256.Sum256(append(append([]byte{}, kubeconfig...), []byte("\x00"+svc.String())...))
	hash := hex.EncodeToString(sum[:])
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clusters == nil {
		r.clusters = map[types.NamespacedName]*Cluster{}
	}
	if c, ok := r.clusters[key]; ok {
		if c.hash == hash {
			return c, nil
		}
		close(c.stop)
		delete(r.clusters, key)
	}
	c, err := r.connect(key, kubeconfig, svc)
	if err != nil {
		return nil, err
	}
	c.hash = hash
	r.clusters[key] = c
	return c, nil
}

// Stop stops key's informer, if any.
func (r *Registry) Stop(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clusters[key]; ok {
		close(c.stop)
		delete(r.clusters, key)
	}
}

// Len is the number of running informers.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.clusters)
}

// RESTConfig turns a kubeconfig file's bytes into a client configuration with the registry's timeout.
func (r *Registry) RESTConfig(kubeconfig []byte) (*rest.Config, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("parsing kubeconfig: %w", err)
	}
	cfg.Timeout = r.Timeout
	if r.UserAgent != "" {
		cfg.UserAgent = r.UserAgent
	}
	return cfg, nil
}

func (r *Registry) connect(key types.NamespacedName, kubeconfig []byte, svc types.NamespacedName) (*Cluster, error) {
	cfg, err := r.RESTConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// One object, by name: the informer's list and watch carry nothing else from the hosted cluster.
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0,
		informers.WithNamespace(svc.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", svc.Name).String()
		}))
	inf := factory.Core().V1().Services().Informer()
	notify := func(any) {
		if r.OnChange != nil {
			r.OnChange(key)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: notify,
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*corev1.Service)
			n, ok2 := newObj.(*corev1.Service)
			// Resyncs and unrelated writes (other field managers' metadata) do not need a reconcile; a change
			// of status (the external IP), spec or annotations does.
			if ok1 && ok2 && o.ResourceVersion == n.ResourceVersion {
				return
			}
			notify(newObj)
		},
		DeleteFunc: notify,
	}); err != nil {
		return nil, err
	}
	c := &Cluster{Kube: kube, Dynamic: dyn, Service: svc, stop: make(chan struct{}), informer: inf}
	go inf.Run(c.stop)
	return c, nil
}
