package kube

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Template kinds (template.openshift.io/v1).
var (
	TemplateGVK         = schema.GroupVersionKind{Group: "template.openshift.io", Version: "v1", Kind: "Template"}
	TemplateInstanceGVK = schema.GroupVersionKind{Group: "template.openshift.io", Version: "v1", Kind: "TemplateInstance"}
)

// Options configures the Kubernetes side.
type Options struct {
	// TemplateNamespace holds the Templates served as catalog items. Default "openshift".
	TemplateNamespace string
	// ResyncPeriod is how often every VDC is compared with its namespace even without an event. Default 1 minute.
	ResyncPeriod time.Duration
	// HealthInterval is how often the API server's /readyz is asked. Default 2 seconds.
	HealthInterval time.Duration
	// PowerTimeout bounds a power action: a VM whose status does not say it is done by then ends its task in error.
	// Default 10 minutes (a first start pulls the VM's disk image).
	PowerTimeout time.Duration
	// InstantiateTimeout bounds an instantiation request from writing the vApp's row to creating its
	// TemplateInstance. A vApp still instantiating without a TemplateInstance twice that long after its row was
	// written was left by a process that stopped in between, and the leader removes it. Default 30 seconds.
	InstantiateTimeout time.Duration
	// Region names the cluster as the Tenant Manager's one region (an RFC 1123 label). Default "kubernetes".
	Region string
}

func (o Options) withDefaults() Options {
	if o.TemplateNamespace == "" {
		o.TemplateNamespace = "openshift"
	}
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = time.Minute
	}
	if o.HealthInterval <= 0 {
		o.HealthInterval = 2 * time.Second
	}
	if o.PowerTimeout <= 0 {
		o.PowerTimeout = 10 * time.Minute
	}
	if o.InstantiateTimeout <= 0 {
		o.InstantiateTimeout = 30 * time.Second
	}
	if o.Region == "" {
		o.Region = "kubernetes"
	}
	return o
}

// Cluster is the process's view of Kubernetes.
type Cluster struct {
	opts   Options
	client client.Client
	reader client.Reader
	rest   rest.Interface
	store  *store.Store
	log    logr.Logger

	available atomic.Bool
	lastError atomic.Value // string
	resync    chan event.TypedGenericEvent[*corev1.Namespace]

	mu      sync.Mutex
	orphans map[string]bool

	namespaces namespaceLocks

	templatesMu sync.Mutex
	templates   map[string]Template
}

func managedBySelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedBy})
}

// CacheOptions limits the informer cache to what ssvirt-api made (by label), the Templates that are catalog items,
// and the VirtualMachines template controllers made (trimmed to their run strategy and status): the process never
// holds every namespace or Secret of the cluster, nor a VM's definition.
func CacheOptions(opts Options) cache.Options {
	opts = opts.withDefaults()
	own := cache.ByObject{Label: managedBySelector()}
	hasVersion, _ := labels.NewRequirement(LabelTemplateVersion, selection.Exists, nil)
	madeByTemplate, _ := labels.NewRequirement(LabelTemplateInstanceOwner, selection.Exists, nil)
	template := &unstructured.Unstructured{}
	template.SetGroupVersionKind(TemplateGVK)
	instance := &unstructured.Unstructured{}
	instance.SetGroupVersionKind(TemplateInstanceGVK)
	return cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Namespace{}:           own,
			&corev1.ResourceQuota{}:       own,
			&networkingv1.NetworkPolicy{}: own,
			instance:                      own,
			newVM():                       {Label: labels.NewSelector().Add(*madeByTemplate), Transform: trimVM},
			template: {
				Label:      labels.NewSelector().Add(*hasVersion),
				Namespaces: map[string]cache.Config{opts.TemplateNamespace: {}},
			},
		},
	}
}

// ClientOptions reads Templates and TemplateInstances (unstructured) from the cache too, so that the catalog
// costs no API request and outlives a Kubernetes outage; Secrets stay out of it (the process only creates them).
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{Unstructured: true, DisableFor: []client.Object{&corev1.Secret{}}}}
}

// Setup registers the reconcilers and the health probe with mgr (whose cache must use CacheOptions).
func Setup(mgr manager.Manager, st *store.Store, opts Options) (*Cluster, error) {
	opts = opts.withDefaults()
	restClient, err := rest.UnversionedRESTClientFor(restConfigForProbe(mgr.GetConfig()))
	if err != nil {
		return nil, err
	}
	k := &Cluster{
		opts: opts, client: mgr.GetClient(), reader: mgr.GetAPIReader(), rest: restClient, store: st,
		log:     mgr.GetLogger().WithName("ssvirt-kube"),
		resync:  make(chan event.TypedGenericEvent[*corev1.Namespace], 4096),
		orphans: map[string]bool{},
	}
	k.lastError.Store("not checked yet")
	if err := k.setupVDCController(mgr); err != nil {
		return nil, err
	}
	if err := k.setupVAppController(mgr); err != nil {
		return nil, err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), newVM(), indexUID, uidIndex); err != nil {
		return nil, err
	}
	if err := k.setupPowerController(mgr); err != nil {
		return nil, err
	}
	if err := mgr.Add(manager.RunnableFunc(k.runDeadlines)); err != nil {
		return nil, err
	}
	// Every replica serves the API and needs its own view of Kubernetes' health, leader or not.
	if err := mgr.Add(everyReplica(k.runHealth)); err != nil {
		return nil, err
	}
	if err := mgr.Add(manager.RunnableFunc(k.runResync)); err != nil {
		return nil, err
	}
	return k, nil
}

// Available says whether the API server answered its last readiness probe.
func (k *Cluster) Available() bool { return k.available.Load() }

// Status is the last probe's outcome in words.
func (k *Cluster) Status() string {
	if k.Available() {
		return "ok"
	}
	return k.lastError.Load().(string)
}

// InstantiateTimeout is how long an instantiation request may take to create its TemplateInstance.
func (k *Cluster) InstantiateTimeout() time.Duration { return k.opts.InstantiateTimeout }

// Region is the name the cluster has as the Tenant Manager's region.
func (k *Cluster) Region() string { return k.opts.Region }

// Orphans lists namespaces labelled as ssvirt's that no VDC owns.
func (k *Cluster) Orphans() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]string, 0, len(k.orphans))
	for ns := range k.orphans {
		out = append(out, ns)
	}
	return out
}

// seen passes err through, noting a connection failure at once instead of at the next probe.
func (k *Cluster) seen(err error) error {
	var netErr interface{ Timeout() bool }
	if err != nil && (errors.As(err, &netErr) || isConnRefused(err)) {
		k.setAvailable(false, err.Error())
	}
	return err
}

func (k *Cluster) setAvailable(ok bool, why string) {
	was := k.available.Swap(ok)
	if !ok {
		k.lastError.Store(why)
	}
	if ok && !was {
		k.log.Info("Kubernetes API available: reconciling every VDC")
		k.Resync(context.Background())
	} else if !ok && was {
		k.log.Info("Kubernetes API unavailable", "error", why)
	}
}

// everyReplica is a runnable that runs whether or not this replica leads.
type everyReplica func(context.Context) error

func (f everyReplica) Start(ctx context.Context) error { return f(ctx) }

func (everyReplica) NeedLeaderElection() bool { return false }
