package controller

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"reflect"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/proxy"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
)

// Keys of the rendered files in the two ConfigMaps; the DNS ConfigMap also holds the zone files its Corefile names.
const (
	CorefileKey = dns.CorefileKey
	HAProxyKey  = "haproxy.cfg"
)

// publisher renders every AppsIngress's entry into the DNS and proxy ConfigMaps. The entries come from the
// AppsIngresses' status (externalIPs, apiEndpoint) and spec, so they survive an operator restart and a Degraded
// object keeps its last good entry; an object being deleted has none.
type publisher struct {
	client    client.Client
	reader    client.Reader
	dnsMap    types.NamespacedName
	proxyMap  types.NamespacedName
	dnsOpts   dns.Options
	proxyOpts proxy.Options
	// proxyService, when set and dnsOpts.ProxyIPs is empty, is read for the proxy's ClusterIPs.
	proxyService types.NamespacedName

	// mu serialises renders: each writes the whole set, so two at once could write an older set last.
	mu sync.Mutex
	// entries are the entries last rendered, by AppsIngress key (nil: none).
	entries map[string]*routes.Cluster
	// renders counts the renders; proxyIDs maps each recent haproxy.cfg's ConfigID to the last render that produced
	// it, so that a replica serving a later render than the one an object waits for counts as up to date.
	renders  uint64
	proxyIDs map[string]uint64
	// last is the previous render's input and output: the same input is not rendered again (a render is linear in
	// the fleet, and objects waiting for the servers reconcile every second or so), only checked against the live
	// ConfigMaps.
	last struct {
		clusters []routes.Cluster
		proxyIPs []netip.Addr
		dns      map[string]string
		cfg      string
		pub      published
	}
}

// published is what one publish wrote.
type published struct {
	render   uint64
	proxyID  string
	proxyIPs []netip.Addr
}

// keptProxyIDs bounds proxyIDs: a replica so far behind that its id was forgotten counts as not up to date.
const keptProxyIDs = 4096

// proxyCurrent says whether the haproxy.cfg with id is the render since or a later one.
func (p *publisher) proxyCurrent(since uint64) func(id string) bool {
	return func(id string) bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		n, ok := p.proxyIDs[id]
		return ok && n >= since
	}
}

// publish writes the configuration with override standing in for the stored object of the same key (nil: none;
// its entry is removed when it has no external IP or is being deleted).
//
// The entries of the other AppsIngresses are the ones this publisher last wrote for them, not their status in the
// cache: with several workers, another object's status write may not have reached the cache yet, and rendering
// from it would drop that object's fresh entry. The cache is used for objects not published since the start.
func (p *publisher) publish(ctx context.Context, override *v1alpha1.AppsIngress) (published, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var list v1alpha1.AppsIngressList
	if err := p.client.List(ctx, &list); err != nil {
		return published{}, err
	}
	if p.entries == nil {
		p.entries = map[string]*routes.Cluster{}
	}
	present := map[string]bool{}
	var clusters []routes.Cluster
	add := func(key string, ai *v1alpha1.AppsIngress, fresh bool) {
		present[key] = true
		e, known := p.entries[key]
		if fresh || !known {
			if c, ok := entry(ai); ok {
				e = &c
			} else {
				e = nil
			}
			p.entries[key] = e
		}
		if e != nil {
			clusters = append(clusters, *e)
		}
	}
	overrideKey := ""
	if override != nil {
		overrideKey = override.Namespace + "/" + override.Name
		add(overrideKey, override, true)
	}
	for i := range list.Items {
		ai := &list.Items[i]
		key := ai.Namespace + "/" + ai.Name
		if key == overrideKey {
			continue
		}
		// An object being deleted loses its entry whatever was published for it.
		add(key, ai, !ai.DeletionTimestamp.IsZero())
	}
	for key := range p.entries {
		if !present[key] {
			delete(p.entries, key)
		}
	}
	dnsOpts := p.dnsOpts
	if len(dnsOpts.ProxyIPs) == 0 && p.proxyService.Name != "" {
		ips, err := p.proxyIPs(ctx)
		if err != nil {
			return published{}, err
		}
		dnsOpts.ProxyIPs = ips
	}
	clusters = routes.Sorted(clusters)
	same := p.last.dns != nil && reflect.DeepEqual(clusters, p.last.clusters) && slices.Equal(dnsOpts.ProxyIPs, p.last.proxyIPs)
	files, cfg := p.last.dns, p.last.cfg
	if !same {
		files, cfg = dns.Render(dnsOpts, clusters), proxy.Render(p.proxyOpts, clusters)
	}
	if err := p.write(ctx, p.dnsMap, files); err != nil {
		return published{}, fmt.Errorf("writing ConfigMap %s: %w", p.dnsMap, err)
	}
	if err := p.write(ctx, p.proxyMap, map[string]string{HAProxyKey: cfg}); err != nil {
		return published{}, fmt.Errorf("writing ConfigMap %s: %w", p.proxyMap, err)
	}
	if same {
		return p.last.pub, nil
	}
	p.renders++
	if p.proxyIDs == nil || len(p.proxyIDs) >= keptProxyIDs {
		p.proxyIDs = map[string]uint64{}
	}
	id := proxy.ConfigID(cfg)
	p.proxyIDs[id] = p.renders
	pub := published{render: p.renders, proxyID: id, proxyIPs: dnsOpts.ProxyIPs}
	p.last.clusters, p.last.proxyIPs, p.last.dns, p.last.cfg, p.last.pub = clusters, dnsOpts.ProxyIPs, files, cfg, pub
	return pub, nil
}

// entry is ai's DNS/proxy entry, from its spec and its status's last good externalIPs and apiEndpoint.
func entry(ai *v1alpha1.AppsIngress) (routes.Cluster, bool) {
	if !ai.DeletionTimestamp.IsZero() || (len(ai.Status.ExternalIPs) == 0 && ai.Status.APIEndpoint == "") {
		return routes.Cluster{}, false
	}
	clusterName := clusterName(ai)
	httpPort, httpsPort := ports(ai)
	c := routes.Cluster{
		Key: ai.Namespace + "/" + ai.Name, Name: clusterName, BaseDomain: ai.Spec.BaseDomain,
		HTTPPort: httpPort, HTTPSPort: httpsPort, APIEndpoint: ai.Status.APIEndpoint, APIBackend: ai.Status.APIBackend,
	}
	for _, s := range ai.Status.ExternalIPs {
		if a, err := netip.ParseAddr(s); err == nil {
			c.ExternalIPs = append(c.ExternalIPs, a)
		}
	}
	for _, s := range ai.Spec.DNS.VLANCIDRs {
		if p, err := netip.ParsePrefix(s); err == nil {
			c.VLANCIDRs = append(c.VLANCIDRs, p)
		}
	}
	return c, len(c.ExternalIPs) > 0 || c.APIEndpoint != ""
}

func (p *publisher) proxyIPs(ctx context.Context) ([]netip.Addr, error) {
	svc := &corev1.Service{}
	if err := p.reader.Get(ctx, p.proxyService, svc); err != nil {
		return nil, fmt.Errorf("reading the proxy Service %s: %w", p.proxyService, err)
	}
	var out []netip.Addr
	for _, s := range svc.Spec.ClusterIPs {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the proxy Service %s has no cluster IP", p.proxyService)
	}
	return out, nil
}

// write applies data as the whole of the ConfigMap's data: keys it no longer has (a removed cluster's zone file) are
// removed with it, since this field manager owned them. It skips the write only when the ConfigMap, as the cache
// has it, already holds exactly data: a ConfigMap someone deleted or edited is written again.
func (p *publisher) write(ctx context.Context, key types.NamespacedName, data map[string]string) error {
	live := &corev1.ConfigMap{}
	err := p.client.Get(ctx, key, live)
	if err == nil && maps.Equal(live.Data, data) && live.Labels[ManagedByLabel] == managedByValue {
		return nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	cm := corev1ac.ConfigMap(key.Name, key.Namespace).
		WithLabels(map[string]string{ManagedByLabel: managedByValue}).
		WithData(data)
	return p.client.Apply(ctx, cm, client.FieldOwner(FieldManager), client.ForceOwnership)
}

// owns says whether the ConfigMap is one the publisher renders.
func (p *publisher) owns(key types.NamespacedName) bool { return key == p.dnsMap || key == p.proxyMap }

// configMapRepair writes the rendered ConfigMaps again whenever one of them changes or goes, so that an edit or a
// deletion by anyone else lasts only until the cache sees it.
type configMapRepair struct{ publisher *publisher }

func (c configMapRepair) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	_, err := c.publisher.publish(ctx, nil)
	return reconcile.Result{}, err
}
