package controller

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
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

// Keys of the main rendered files in the two main ConfigMaps; their shards (<name>-<i>) hold the clusters' files.
const (
	CorefileKey = dns.CorefileKey
	HAProxyKey  = proxy.MainKey
)

// MaxConfigShards is the most shards the operator writes (the chart's schema allows as many, and lets the operator
// delete the ones a run with more left behind).
const MaxConfigShards = 32

// maxConfigMapBytes is what one ConfigMap may hold (the API server refuses a larger one), less room for its metadata.
const maxConfigMapBytes = 1<<20 - 16<<10

// publisher renders every AppsIngress's entry into the DNS and proxy ConfigMaps: for each server a main one and
// shards beside it (<name>-<i>), each cluster's files in one shard. The entries come from the
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
	// qmu guards the queue of entries waiting for the next render. Reconciles that publish while a render runs are
	// served together by the next one (group commit): a render is linear in the fleet, so one per reconcile would
	// make a fleet created at once wait quadratically.
	qmu   sync.Mutex
	queue map[string]*routes.Cluster
	// enqueued counts publish calls; covered is the last call the latest render included, lastPub and lastErr what
	// it gave.
	enqueued, covered uint64
	lastPub           published
	lastErr           error
	// written is, by AppsIngress key, the entries of the last render, and writtenPub what it gave, once it was written
	// without error (nil after a failed one); both guarded by qmu. A publish of the entry written for its key, with
	// none queued for it, returns at once: a Ready fleet's re-checks and objects waiting for the servers publish what
	// is already written, and a render (a list of every AppsIngress, the files compared with the live ConfigMaps)
	// for each would hold the lock the changes wait for. The ConfigMaps' own watch undoes edits of them.
	written    map[string]*routes.Cluster
	writtenPub published
	// idsMu guards proxyIDs, which checks read while a render runs.
	idsMu sync.Mutex
	// proxyIPsCache is the proxy Service's cluster IPs and when they were read (they change only with the Service).
	proxyIPsCache struct {
		ips []netip.Addr
		at  time.Time
	}
	// entries are the entries last rendered, by AppsIngress key (nil: none).
	entries map[string]*routes.Cluster
	// renders counts the renders; proxyIDs maps each recent ConfigID of the proxy's files (main and shards) to the
	// last render that produced it, so that a replica serving a later render than the one an object waits for counts
	// as up to date.
	renders  uint64
	proxyIDs map[string]uint64
	// since is, for each entry rendered, the render that last changed it (guarded by idsMu).
	since map[string]uint64
	// pruned is set once shards beyond the configured number (left by an operator run with more) are deleted.
	pruned bool
	// reloadRequest is the DNS configuration's reload request (dns.Options.ReloadRequest), raised at requestedAt by
	// requestDNSReload (both guarded by mu).
	reloadRequest uint64
	requestedAt   time.Time
	// last is the previous render's input and output: the same input is not rendered again (a render is linear in
	// the fleet, and objects waiting for the servers reconcile every second or so), only checked against the live
	// ConfigMaps.
	last struct {
		clusters      []routes.Cluster
		proxyIPs      []netip.Addr
		reloadRequest uint64
		dns, cfg      routes.Files
		pub           published
	}
}

// published is what one publish wrote.
type published struct {
	render   uint64
	proxyIPs []netip.Addr
	// proxyMainID and proxyShardIDs are the ConfigIDs of the proxy's main file and of each shard's.
	proxyMainID   string
	proxyShardIDs []string
}

// proxyWants is what each HAProxy replica must serve for the entry with key: the main file and the entry's shard as
// this publish wrote them (or a later render).
func (p published) proxyWants(key string) []servedID {
	i := routes.ShardOf(key, len(p.proxyShardIDs))
	return []servedID{{proxy.ConfigIDPath, p.proxyMainID}, {proxy.ShardStatusPath(i), p.proxyShardIDs[i]}}
}

// keptRenders bounds proxyIDs to the ids of the latest renders: a replica so far behind that its id was forgotten
// counts as not up to date.
const keptRenders = 256

// entrySince is the render an entry's servers must have reached to serve it as published: the one that last
// changed it (or, for a key with no entry, the latest).
func (p *publisher) entrySince(key string, pub published) uint64 {
	p.idsMu.Lock()
	defer p.idsMu.Unlock()
	if n, ok := p.since[key]; ok && n <= pub.render {
		return n
	}
	return pub.render
}

// proxyCurrent says whether the proxy file with ConfigID id is as rendered by render since or a later one.
func (p *publisher) proxyCurrent(since uint64) func(id string) bool {
	return func(id string) bool {
		p.idsMu.Lock()
		defer p.idsMu.Unlock()
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
//
// It returns once a render that includes override is written: its own, one another call made meanwhile, or, when
// override's entry is the one last written for it, the last one.
func (p *publisher) publish(ctx context.Context, override *v1alpha1.AppsIngress) (published, error) {
	p.qmu.Lock()
	p.enqueued++
	ticket := p.enqueued
	if override != nil {
		if p.queue == nil {
			p.queue = map[string]*routes.Cluster{}
		}
		var e *routes.Cluster
		if c, ok := entry(override); ok {
			e = &c
		}
		key := override.Namespace + "/" + override.Name
		_, queued := p.queue[key]
		if w, ok := p.written[key]; ok && !queued && reflect.DeepEqual(w, e) {
			pub := p.writtenPub
			p.qmu.Unlock()
			return pub, nil
		}
		p.queue[key] = e
	}
	p.qmu.Unlock()

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.covered >= ticket {
		return p.lastPub, p.lastErr
	}
	p.qmu.Lock()
	batch, covered := p.queue, p.enqueued
	p.queue = nil
	p.qmu.Unlock()
	p.lastPub, p.lastErr = p.render(ctx, batch)
	p.covered = covered
	p.qmu.Lock()
	p.written, p.writtenPub = nil, p.lastPub
	if p.lastErr == nil {
		p.written = maps.Clone(p.entries)
	}
	p.qmu.Unlock()
	return p.lastPub, p.lastErr
}

// render writes the configuration with the entries of batch standing in for the stored objects of the same keys.
func (p *publisher) render(ctx context.Context, batch map[string]*routes.Cluster) (published, error) {
	var list v1alpha1.AppsIngressList
	if err := p.client.List(ctx, &list); err != nil {
		return published{}, err
	}
	clusters := routes.Sorted(p.merge(list.Items, batch))
	dnsOpts := p.dnsOpts
	if len(dnsOpts.ProxyIPs) == 0 && p.proxyService.Name != "" {
		ips, err := p.proxyIPs(ctx)
		if err != nil {
			return published{}, err
		}
		dnsOpts.ProxyIPs = ips
	}
	dnsOpts.ReloadRequest = p.reloadRequest
	same := p.last.dns.Main != nil && reflect.DeepEqual(clusters, p.last.clusters) && slices.Equal(dnsOpts.ProxyIPs, p.last.proxyIPs) &&
		p.last.reloadRequest == p.reloadRequest
	dnsFiles, proxyFiles := p.last.dns, p.last.cfg
	if !same {
		dnsFiles, proxyFiles = dns.Render(dnsOpts, clusters), proxy.Render(p.proxyOpts, clusters)
	}
	if err := p.writeAll(ctx, map[types.NamespacedName]routes.Files{p.dnsMap: dnsFiles, p.proxyMap: proxyFiles}); err != nil {
		return published{}, err
	}
	if !p.pruned {
		if err := p.prune(ctx); err != nil {
			return published{}, err
		}
		p.pruned = true
	}
	if same {
		return p.last.pub, nil
	}
	return p.remember(clusters, dnsOpts.ProxyIPs, dnsFiles, proxyFiles), nil
}

// merge is the entries to render: batch's, then for every other stored object the entry last published for it
// (its status's for one not published since the start, none for one being deleted). It forgets the entries of
// objects that are gone.
func (p *publisher) merge(items []v1alpha1.AppsIngress, batch map[string]*routes.Cluster) []routes.Cluster {
	if p.entries == nil {
		p.entries = map[string]*routes.Cluster{}
	}
	present := map[string]bool{}
	var clusters []routes.Cluster
	for key, e := range batch {
		present[key] = true
		p.entries[key] = e
		if e != nil {
			clusters = append(clusters, *e)
		}
	}
	for i := range items {
		ai := &items[i]
		key := ai.Namespace + "/" + ai.Name
		if _, queued := batch[key]; queued {
			continue
		}
		present[key] = true
		e, known := p.entries[key]
		// An object being deleted loses its entry whatever was published for it.
		if !known || !ai.DeletionTimestamp.IsZero() {
			e = nil
			if c, ok := entry(ai); ok {
				e = &c
			}
			p.entries[key] = e
		}
		if e != nil {
			clusters = append(clusters, *e)
		}
	}
	maps.DeleteFunc(p.entries, func(key string, _ *routes.Cluster) bool { return !present[key] })
	return clusters
}

// remember records a render that changed the files: which render each entry last changed in, and the proxy's
// configuration ids of this render, so that a replica's answer can be matched to it.
func (p *publisher) remember(clusters []routes.Cluster, proxyIPs []netip.Addr, dnsFiles, proxyFiles routes.Files) published {
	p.renders++
	p.idsMu.Lock()
	defer p.idsMu.Unlock()
	if p.proxyIDs == nil {
		p.proxyIDs, p.since = map[string]uint64{}, map[string]uint64{}
	}
	if p.renders%keptRenders == 0 {
		maps.DeleteFunc(p.proxyIDs, func(_ string, n uint64) bool { return n+keptRenders < p.renders })
	}
	// An entry's wait is for the render that changed it: renders for other entries, which a fleet being created
	// makes several times a second, move the servers on without this entry having to wait for each of them.
	previous := make(map[string]*routes.Cluster, len(p.last.clusters))
	for i := range p.last.clusters {
		previous[p.last.clusters[i].Key] = &p.last.clusters[i]
	}
	current := make(map[string]bool, len(clusters))
	for i := range clusters {
		c := &clusters[i]
		current[c.Key] = true
		if old := previous[c.Key]; old == nil || !reflect.DeepEqual(*old, *c) {
			p.since[c.Key] = p.renders
		}
	}
	maps.DeleteFunc(p.since, func(key string, _ uint64) bool { return !current[key] })
	if !slices.Equal(proxyIPs, p.last.proxyIPs) {
		// Every entry's answer in the default view changed.
		for key := range p.since {
			p.since[key] = p.renders
		}
	}
	pub := published{render: p.renders, proxyIPs: proxyIPs, proxyMainID: proxy.ConfigID(proxyFiles.Main[HAProxyKey])}
	p.proxyIDs[pub.proxyMainID] = p.renders
	for i, shard := range proxyFiles.Shards {
		id := proxy.ConfigID(shard[proxy.ShardFile(i)])
		pub.proxyShardIDs = append(pub.proxyShardIDs, id)
		p.proxyIDs[id] = p.renders
	}
	p.last.clusters, p.last.proxyIPs, p.last.dns, p.last.cfg, p.last.pub = clusters, proxyIPs, dnsFiles, proxyFiles, pub
	p.last.reloadRequest = p.reloadRequest
	return pub
}

// requestDNSReload writes the DNS configuration again with the next reload request, unless the last request is more
// recent than every: only the Corefile changes, and every CoreDNS replica reloads it with the files it imports. This
// repairs a replica that serves less than its files hold, which its own reload check no longer sees (a restart that
// failed, or files that changed back while it restarted). It returns the request, 0 when none was made.
func (p *publisher) requestDNSReload(ctx context.Context, now time.Time, every time.Duration) (uint64, error) {
	p.mu.Lock()
	if !p.requestedAt.IsZero() && now.Sub(p.requestedAt) < every {
		p.mu.Unlock()
		return 0, nil
	}
	p.reloadRequest++
	p.requestedAt = now
	request := p.reloadRequest
	p.mu.Unlock()
	if _, err := p.publish(ctx, nil); err != nil {
		return 0, err
	}
	return request, nil
}

// writeAll writes, for each main ConfigMap, its files' main part to it and shard i to main-i. A shard too large for
// a ConfigMap is an error that says what to do, and nothing of that render is written.
//
// The shards are written together, then the main parts together: every render waits for its writes, and a fleet being
// created renders several times a second, so writing one ConfigMap after another made the writes the fleet's
// bottleneck.
func (p *publisher) writeAll(ctx context.Context, all map[types.NamespacedName]routes.Files) error {
	for main, files := range all {
		for i, shard := range files.Shards {
			if n := routes.Size(shard); n > maxConfigMapBytes {
				return fmt.Errorf("ConfigMap %s would hold %d bytes, more than a ConfigMap can (1 MiB): raise --config-shards (the chart's configShards) above %d",
					routes.ShardName(main.Name, i), n, len(files.Shards))
			}
		}
	}
	shards, mains := map[types.NamespacedName]map[string]string{}, map[types.NamespacedName]map[string]string{}
	for main, files := range all {
		for i, shard := range files.Shards {
			shards[types.NamespacedName{Namespace: main.Namespace, Name: routes.ShardName(main.Name, i)}] = shard
		}
		mains[main] = files.Main
	}
	// The main files last: a Corefile or haproxy.cfg naming a new shard finds its files written.
	for _, set := range []map[types.NamespacedName]map[string]string{shards, mains} {
		g, gctx := errgroup.WithContext(ctx)
		for key, data := range set {
			g.Go(func() error {
				if err := p.write(gctx, key, data); err != nil {
					return fmt.Errorf("writing ConfigMap %s: %w", key, err)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	return nil
}

// prune deletes the shards this publisher no longer writes (an operator run with a larger --config-shards left
// them): only ConfigMaps it labels, named <main>-<i>.
func (p *publisher) prune(ctx context.Context) error {
	var list corev1.ConfigMapList
	if err := p.client.List(ctx, &list, client.InNamespace(p.dnsMap.Namespace), client.MatchingLabels{ManagedByLabel: managedByValue}); err != nil {
		return err
	}
	for i := range list.Items {
		cm := &list.Items[i]
		key := client.ObjectKeyFromObject(cm)
		if p.owns(key) || !p.shardOf(key) {
			continue
		}
		if err := p.client.Delete(ctx, cm, client.Preconditions{UID: &cm.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting ConfigMap %s, a shard beyond --config-shards: %w", key, err)
		}
	}
	return nil
}

// shardOf says whether key is named like a shard of either main ConfigMap that some run may have written (an index
// below MaxConfigShards).
func (p *publisher) shardOf(key types.NamespacedName) bool {
	for _, main := range []types.NamespacedName{p.dnsMap, p.proxyMap} {
		if rest, ok := strings.CutPrefix(key.Name, main.Name+"-"); ok && key.Namespace == main.Namespace {
			if i, err := strconv.Atoi(rest); err == nil && i >= 0 && i < MaxConfigShards && strconv.Itoa(i) == rest {
				return true
			}
		}
	}
	return false
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

// proxyIPsTTL is how long the proxy Service's cluster IPs are used without reading it again: they are immutable for
// the Service's life, and reading them at every render would be a request per render.
const proxyIPsTTL = 30 * time.Second

func (p *publisher) proxyIPs(ctx context.Context) ([]netip.Addr, error) {
	if c := p.proxyIPsCache; c.ips != nil && time.Since(c.at) < proxyIPsTTL {
		return c.ips, nil
	}
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
	p.proxyIPsCache.ips, p.proxyIPsCache.at = out, time.Now()
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

// owns says whether the ConfigMap is one the publisher renders: a main one or one of its shards.
func (p *publisher) owns(key types.NamespacedName) bool {
	for _, main := range []types.NamespacedName{p.dnsMap, p.proxyMap} {
		if key == main {
			return true
		}
		for i := range p.shards() {
			if key == (types.NamespacedName{Namespace: main.Namespace, Name: routes.ShardName(main.Name, i)}) {
				return true
			}
		}
	}
	return false
}

// shards is how many shards each server's files are split into.
func (p *publisher) shards() int { return max(p.dnsOpts.Shards, 1) }

// configMapRepair writes the rendered ConfigMaps again whenever one of them changes or goes, so that an edit or a
// deletion by anyone else lasts only until the cache sees it.
type configMapRepair struct{ publisher *publisher }

func (c configMapRepair) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	_, err := c.publisher.publish(ctx, nil)
	return reconcile.Result{}, err
}
