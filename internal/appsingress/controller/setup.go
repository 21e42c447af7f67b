package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/hosted"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/proxy"
)

// Options configure the controller.
type Options struct {
	// DNSConfigMap and ProxyConfigMap receive the rendered Corefile and haproxy.cfg; the clusters' files go to
	// ConfigShards shards beside each (<name>-<i>), which the servers' sidecars read too. Default 1.
	DNSConfigMap, ProxyConfigMap types.NamespacedName
	ConfigShards                 int
	DNS                          dns.Options
	Proxy                        proxy.Options
	// ProxyService is read for the DNS default view's answer when DNS.ProxyIPs is empty.
	ProxyService types.NamespacedName
	// HostedClusterTimeout bounds each request to a hosted cluster. Default 10s.
	HostedClusterTimeout time.Duration
	// CleanupTimeout bounds how long a deletion retries deleting the hosted Service. Default 2m.
	CleanupTimeout time.Duration
	// BackoffBase and BackoffMax are the per-object exponential retry delays of failed reconciles.
	// Defaults 1s and 5m.
	BackoffBase, BackoffMax time.Duration
	// MaxConcurrentReconciles. Default 4.
	MaxConcurrentReconciles int
	// DNSReplicas and ProxyReplicas are asked what they serve (required): an object is Ready once every replica
	// serves its entry. DNSReplicas are DNS servers, ProxyReplicas the HAProxy status frontends.
	DNSReplicas, ProxyReplicas Replicas
	// ProbeTimeout bounds each question to a replica. Default 2s.
	ProbeTimeout time.Duration
	// LoadPoll is how often an object whose entry is not served everywhere yet asks again. Default 1s.
	LoadPoll time.Duration
	// ServedWait is how long the reconcile that published a new entry waits for every replica to serve it before it
	// writes the status and leaves the rest to LoadPoll. Default 2s; negative: no wait.
	ServedWait time.Duration
	// DNSRepairAfter is how long a CoreDNS replica may run one configuration without serving an entry written before
	// the operator requests a reload of every replica's configuration (at most once per DNSRepairAfter). Default 30s.
	DNSRepairAfter time.Duration
	// RecheckInterval is how often a Ready object is reconciled again without any event: the hosted cluster's
	// reachability and what the replicas serve. Default 1m.
	RecheckInterval time.Duration
	// ControlPlaneService names the hosted API server's Service in each hosted control plane namespace
	// (HyperShift's kube-apiserver), on ControlPlanePort; when its name resolves in ClusterDomain, the operator and the
	// proxy reach the API there instead of at its published endpoint. Empty: always the published endpoint.
	ControlPlaneService string
	ControlPlanePort    int
	ClusterDomain       string
}

func (o Options) withDefaults() Options {
	if o.ConfigShards == 0 {
		o.ConfigShards = 1
	}
	if o.HostedClusterTimeout == 0 {
		o.HostedClusterTimeout = 10 * time.Second
	}
	if o.CleanupTimeout == 0 {
		o.CleanupTimeout = 2 * time.Minute
	}
	if o.BackoffBase == 0 {
		o.BackoffBase = time.Second
	}
	if o.BackoffMax == 0 {
		o.BackoffMax = 5 * time.Minute
	}
	if o.MaxConcurrentReconciles == 0 {
		o.MaxConcurrentReconciles = 4
	}
	if o.ProbeTimeout == 0 {
		o.ProbeTimeout = 2 * time.Second
	}
	if o.LoadPoll == 0 {
		o.LoadPoll = time.Second
	}
	if o.ServedWait == 0 {
		o.ServedWait = 2 * time.Second
	}
	if o.RecheckInterval == 0 {
		o.RecheckInterval = time.Minute
	}
	if o.DNSRepairAfter == 0 {
		o.DNSRepairAfter = 30 * time.Second
	}
	if o.ControlPlanePort == 0 {
		o.ControlPlanePort = 6443
	}
	if o.ClusterDomain == "" {
		o.ClusterDomain = "cluster.local"
	}
	return o
}

// Index names.
const (
	indexHostedCluster = "spec.hostedClusterRef"
	indexKubeconfig    = "status.kubeconfig.name"
)

// CacheOptions limit the manager's cache: Secrets only in secretNamespaces (empty: all), ConfigMaps (the operator's
// own) and Services only in the operator's namespace.
func CacheOptions(operatorNamespace string, secretNamespaces []string) cache.Options {
	secretNS := map[string]cache.Config{}
	for _, ns := range secretNamespaces {
		secretNS[ns] = cache.Config{}
	}
	byObject := map[client.Object]cache.ByObject{
		// Only the operator's own ConfigMaps (its rendered ones carry the label): the others of its namespace are not
		// its business.
		&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{operatorNamespace: {
			LabelSelector: labels.SelectorFromSet(labels.Set{ManagedByLabel: managedByValue}),
		}}},
		&corev1.Service{}: {Namespaces: map[string]cache.Config{operatorNamespace: {}}},
		// The CoreDNS and HAProxy replicas, asked what they serve.
		&discoveryv1.EndpointSlice{}: {Namespaces: map[string]cache.Config{operatorNamespace: {}}},
	}
	// A HostedCluster namespace holds many Secrets besides the kubeconfigs (pull secrets, SSH keys, etcd
	// encryption keys...): the cache keeps only their kubeconfig key, so that neither their contents nor their size
	// stay in the operator's memory.
	secrets := cache.ByObject{Transform: onlyKubeconfig}
	if len(secretNS) > 0 {
		secrets.Namespaces = secretNS
	}
	byObject[&corev1.Secret{}] = secrets
	return cache.Options{ByObject: byObject}
}

// onlyKubeconfig drops every key of a Secret but the kubeconfig, before the cache stores it.
func onlyKubeconfig(o any) (any, error) {
	s, ok := o.(*corev1.Secret)
	if !ok {
		return o, nil
	}
	for k := range s.Data {
		if k != kubeconfigKey {
			delete(s.Data, k)
		}
	}
	s.StringData = nil
	s.ManagedFields = nil
	return s, nil
}

// Setup registers the controller with mgr. The HostedCluster CRD must be installed.
func Setup(mgr ctrl.Manager, o Options) (*Reconciler, error) {
	o = o.withDefaults()
	if o.ConfigShards < 1 || o.ConfigShards > MaxConfigShards {
		return nil, fmt.Errorf("ConfigShards %d: want 1 to %d", o.ConfigShards, MaxConfigShards)
	}
	o.DNS.Shards, o.Proxy.Shards = o.ConfigShards, o.ConfigShards
	if o.DNSReplicas == nil || o.ProxyReplicas == nil {
		return nil, errors.New("DNSReplicas and ProxyReplicas are required: Ready means every replica serves the entry")
	}
	registerMetrics()
	r, hostedChanges := newReconciler(mgr, o)
	if err := addInitialPublish(mgr, r.publisher); err != nil {
		return nil, err
	}
	if err := addIndexes(mgr); err != nil {
		return nil, err
	}
	return r, addControllers(mgr, r, hostedChanges, o)
}

// newReconciler is the reconciler for o, and the channel on which its hosted clusters' watches report a change of
// an AppsIngress's Service.
func newReconciler(mgr ctrl.Manager, o Options) (*Reconciler, chan event.TypedGenericEvent[*v1alpha1.AppsIngress]) {
	events := make(chan event.TypedGenericEvent[*v1alpha1.AppsIngress], 1024)
	r := &Reconciler{
		client: mgr.GetClient(),
		// The cache, not the client: the client reads unstructured objects (HostedCluster) from the API server.
		reader: mgr.GetCache(),
		live:   mgr.GetAPIReader(),
		hosted: &hosted.Registry{Timeout: o.HostedClusterTimeout, UserAgent: FieldManager},
		publisher: &publisher{
			client: mgr.GetClient(), reader: mgr.GetAPIReader(),
			dnsMap: o.DNSConfigMap, proxyMap: o.ProxyConfigMap,
			dnsOpts: o.DNS, proxyOpts: o.Proxy, proxyService: o.ProxyService,
		},
		recorder:       mgr.GetEventRecorder(FieldManager),
		cleanupTimeout: o.CleanupTimeout,
		slowResync:     5 * time.Minute,
		check:          newLoadCheck(o.DNSReplicas, o.ProxyReplicas, o.ProbeTimeout),
		loadPoll:       o.LoadPoll,
		servedWait:     o.ServedWait,
		recheck:        o.RecheckInterval,
		dnsRepairAfter: o.DNSRepairAfter,
		controlPlane: controlPlane{
			service: o.ControlPlaneService, port: o.ControlPlanePort, clusterDomain: o.ClusterDomain,
			lookupHost: net.DefaultResolver.LookupHost,
		},
		now: time.Now,
	}
	r.hosted.OnChange = func(key types.NamespacedName) {
		ai := &v1alpha1.AppsIngress{}
		ai.Namespace, ai.Name = key.Namespace, key.Name
		events <- event.TypedGenericEvent[*v1alpha1.AppsIngress]{Object: ai}
	}
	return r, events
}

// addInitialPublish writes the ConfigMaps from the start, so that the CoreDNS and HAProxy Pods, which mount them,
// can start before the first AppsIngress is Ready. It runs on the leader only, once the cache has synced.
func addInitialPublish(mgr ctrl.Manager, p *publisher) error {
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return nil
		}
		// A failure here is not fatal: the next reconcile writes them again.
		if _, err := p.publish(ctx, nil); err != nil {
			logf.FromContext(ctx).Error(err, "writing the initial DNS and proxy ConfigMaps")
		}
		return nil
	}))
}

// addIndexes indexes AppsIngresses by the HostedCluster they name, and HostedClusters by their kubeconfig Secret.
func addIndexes(mgr ctrl.Manager) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1alpha1.AppsIngress{}, indexHostedCluster, func(o client.Object) []string {
		return []string{hostedClusterKey(o.(*v1alpha1.AppsIngress)).String()}
	}); err != nil {
		return err
	}
	return idx.IndexField(ctx, hostedClusterObject(), indexKubeconfig, func(o client.Object) []string {
		name, _, _ := unstructured.NestedString(o.(*unstructured.Unstructured).Object, "status", "kubeconfig", "name")
		if name == "" {
			return nil
		}
		return []string{name}
	})
}

func hostedClusterObject() *unstructured.Unstructured {
	hc := &unstructured.Unstructured{}
	hc.SetGroupVersionKind(HostedClusterGVK)
	return hc
}

// addControllers registers the AppsIngress controller, fed by its objects, their HostedClusters and kubeconfig
// Secrets and the hosted Services' watches, and the one that undoes changes to the rendered ConfigMaps.
func addControllers(mgr ctrl.Manager, r *Reconciler, hostedChanges chan event.TypedGenericEvent[*v1alpha1.AppsIngress], o Options) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named("appsingress").
		WatchesRawSource(source.Kind(mgr.GetCache(), &v1alpha1.AppsIngress{},
			&handler.TypedEnqueueRequestForObject[*v1alpha1.AppsIngress]{}, specChanged)).
		Watches(hostedClusterObject(), handler.EnqueueRequestsFromMapFunc(r.forHostedCluster)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.forSecret)).
		WatchesRawSource(source.Channel(hostedChanges, &handler.TypedEnqueueRequestForObject[*v1alpha1.AppsIngress]{})).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: o.MaxConcurrentReconciles,
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](o.BackoffBase, o.BackoffMax),
		}).
		Complete(r)
	if err != nil {
		return err
	}
	// The rendered ConfigMaps are the operator's: a change by anyone else is undone.
	return ctrl.NewControllerManagedBy(mgr).
		Named("appsingress-configmaps").
		WatchesRawSource(source.Kind(mgr.GetCache(), &corev1.ConfigMap{},
			&handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{},
			predicate.NewTypedPredicateFuncs(func(cm *corev1.ConfigMap) bool {
				return r.publisher.owns(client.ObjectKeyFromObject(cm))
			}))).
		Complete(configMapRepair{publisher: r.publisher})
}

// forHostedCluster maps a HostedCluster to the AppsIngresses that name it.
func (r *Reconciler) forHostedCluster(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.AppsIngressList
	if err := r.client.List(ctx, &list, client.MatchingFields{indexHostedCluster: client.ObjectKeyFromObject(o).String()}); err != nil {
		logf.FromContext(ctx).Error(err, "listing the AppsIngresses of a HostedCluster", "hostedCluster", client.ObjectKeyFromObject(o))
		return nil
	}
	out := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		out[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return out
}

// forSecret maps a kubeconfig Secret to the AppsIngresses of the HostedClusters that publish it.
func (r *Reconciler) forSecret(ctx context.Context, o client.Object) []reconcile.Request {
	hcs := &unstructured.UnstructuredList{}
	hcs.SetGroupVersionKind(HostedClusterGVK.GroupVersion().WithKind(HostedClusterGVK.Kind + "List"))
	if err := r.reader.List(ctx, hcs, client.InNamespace(o.GetNamespace()), client.MatchingFields{indexKubeconfig: o.GetName()}); err != nil {
		logf.FromContext(ctx).Error(err, "listing the HostedClusters of a Secret", "secret", client.ObjectKeyFromObject(o))
		return nil
	}
	var out []reconcile.Request
	for i := range hcs.Items {
		out = append(out, r.forHostedCluster(ctx, &hcs.Items[i])...)
	}
	return out
}
