package controller

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes/routestest"
)

// Two reconciles publish one after the other while the cache still shows neither object's new status: the second
// render must keep the first one's entry.
func TestPublishKeepsEntriesTheCacheHasNotCaughtUpWith(t *testing.T) {
	a, b := example(), example()
	b.Name, b.Spec.HostedClusterRef.Name = "dev", "dev"
	// A shard left by a run with more shards is deleted; a ConfigMap of that name the operator did not label is not.
	stale := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "proxy-7", Labels: map[string]string{ManagedByLabel: managedByValue}}}
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "proxy-9"}}
	p, c := testPublisher(t, a.DeepCopy(), b.DeepCopy(), stale, foreign)
	p.dnsOpts.Shards, p.proxyOpts.Shards = 2, 2
	keyA := a.Namespace + "/" + a.Name

	a.Status.ExternalIPs = []string{"192.0.2.1"}
	first, err := p.publish(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	b.Status.ExternalIPs = []string{"192.0.2.2"}
	second, err := p.publish(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	// A replica serving the second render serves the first object's entry too; one serving the first does not serve
	// the second's.
	keyB := b.Namespace + "/" + b.Name
	for _, w := range second.proxyWants(keyA) {
		if !p.proxyCurrent(first.render)(w.id) {
			t.Errorf("%s of render %d does not count for render %d", w.path, second.render, first.render)
		}
	}
	if w := first.proxyWants(keyB)[1]; p.proxyCurrent(second.render)(w.id) {
		t.Errorf("%s of render %d counts for render %d, which changed it", w.path, first.render, second.render)
	}
	// The first entry waits for the render that changed it, not for every later one made for others.
	if got := p.entrySince(keyA, second); got != first.render {
		t.Errorf("the first entry waits for render %d, want %d (the one that changed it)", got, first.render)
	}
	if got := p.entrySince(keyB, second); got != second.render {
		t.Errorf("the second entry waits for render %d, want %d", got, second.render)
	}
	if p.proxyCurrent(first.render)("unknown") {
		t.Error("an id never rendered counts as current")
	}
	// The same entries again: no new render, the same configuration.
	if again, err := p.publish(context.Background(), b); err != nil || again.render != second.render || !slices.Equal(again.proxyShardIDs, second.proxyShardIDs) {
		t.Errorf("publishing unchanged entries gave %+v (%v), want render %+v", again, err, second)
	}
	proxyFiles := func() string {
		var all strings.Builder
		for i := range 2 {
			cm := &corev1.ConfigMap{}
			if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ops", Name: routes.ShardName("proxy", i)}, cm); err != nil {
				t.Fatal(err)
			}
			all.WriteString(routestest.Dump(cm.Data))
		}
		return all.String()
	}
	for _, want := range []string{"192.0.2.1:443", "192.0.2.2:443"} {
		if !strings.Contains(proxyFiles(), want) {
			t.Errorf("the proxy's shards lack %s:\n%s", want, proxyFiles())
		}
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), p.proxyMap, cm); err != nil || !strings.Contains(cm.Data[HAProxyKey], "/config-id/1") {
		t.Errorf("the main haproxy.cfg does not name both shards (%v):\n%s", err, cm.Data[HAProxyKey])
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(stale), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("the stale shard is still there: %v", err)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(foreign), &corev1.ConfigMap{}); err != nil {
		t.Errorf("a ConfigMap the operator did not label was touched: %v", err)
	}

	// Deleting the first object removes its entry at the next publish.
	if err := c.Delete(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, err := p.publish(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if out := proxyFiles(); strings.Contains(out, "192.0.2.1:443") || !strings.Contains(out, "192.0.2.2:443") {
		t.Errorf("after deleting prod:\n%s", out)
	}
}

// testPublisher is a publisher writing ops/dns and ops/proxy (and their shards) through a fake API server that holds
// objs; the proxy's address is 10.0.0.1.
func testPublisher(t *testing.T, objs ...client.Object) (*publisher, client.Client) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	p := &publisher{client: c, reader: c, dnsMap: types.NamespacedName{Namespace: "ops", Name: "dns"}, proxyMap: types.NamespacedName{Namespace: "ops", Name: "proxy"}}
	p.dnsOpts.ProxyIPs = []netip.Addr{netip.MustParseAddr("10.0.0.1")}
	return p, c
}

// An entry already written is published again without a render (a Ready object's re-check, an object waiting for the
// servers); a changed one renders; after a render that failed, every publish renders until one is written.
func TestPublishOfAWrittenEntryDoesNotRender(t *testing.T) {
	a := example()
	p, c := testPublisher(t, a.DeepCopy())
	lists, failLists := 0, false
	p.client = interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*v1alpha1.AppsIngressList); ok {
				lists++
				if failLists {
					return apierrors.NewServiceUnavailable("down")
				}
			}
			return cl.List(ctx, list, opts...)
		},
	})
	ctx := context.Background()
	a.Status.ExternalIPs = []string{"192.0.2.1"}
	first, err := p.publish(ctx, a)
	if err != nil || lists != 1 {
		t.Fatalf("first publish: %v, %d renders, want 1", err, lists)
	}
	again, err := p.publish(ctx, a.DeepCopy())
	if err != nil || lists != 1 || again.render != first.render {
		t.Fatalf("the same entry again: %v, %d renders (want 1), render %d (want %d)", err, lists, again.render, first.render)
	}
	a.Status.ExternalIPs = []string{"192.0.2.2"}
	if _, err := p.publish(ctx, a); err != nil || lists != 2 {
		t.Fatalf("a new address: %v, %d renders, want 2", err, lists)
	}
	failLists = true
	a.Status.ExternalIPs = []string{"192.0.2.3"}
	if _, err := p.publish(ctx, a); err == nil {
		t.Fatal("a render whose list failed reported no error")
	}
	a.Status.ExternalIPs = []string{"192.0.2.2"}
	if _, err := p.publish(ctx, a); err == nil || lists != 4 {
		t.Fatalf("after a failed render, the last written entry published again: %v after %d renders, want an error after 4", err, lists)
	}
	failLists = false
	if _, err := p.publish(ctx, a); err != nil || lists != 5 {
		t.Fatalf("once the API answers: %v, %d renders, want 5", err, lists)
	}
}
