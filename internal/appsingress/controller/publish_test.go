package controller

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

// Two reconciles publish one after the other while the cache still shows neither object's new status: the second
// render must keep the first one's entry.
func TestPublishKeepsEntriesTheCacheHasNotCaughtUpWith(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	a, b := example(), example()
	b.Name, b.Spec.HostedClusterRef.Name = "dev", "dev"
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(a.DeepCopy(), b.DeepCopy()).Build()
	p := &publisher{client: c, reader: c, dnsMap: types.NamespacedName{Namespace: "ops", Name: "dns"}, proxyMap: types.NamespacedName{Namespace: "ops", Name: "proxy"}}
	p.dnsOpts.ProxyIPs, _ = ParseAddrs([]string{"10.0.0.1"})

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
	if !p.proxyCurrent(first.render)(second.proxyID) || p.proxyCurrent(second.render)(first.proxyID) || first.proxyID == second.proxyID {
		t.Errorf("renders %d (%s) and %d (%s): wrong order of configurations", first.render, first.proxyID, second.render, second.proxyID)
	}
	if p.proxyCurrent(first.render)("unknown") {
		t.Error("an id never rendered counts as current")
	}
	// The same entries again: no new render, the same configuration.
	if again, err := p.publish(context.Background(), b); err != nil || again.render != second.render || again.proxyID != second.proxyID {
		t.Errorf("publishing unchanged entries gave %+v (%v), want render %+v", again, err, second)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), p.proxyMap, cm); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"192.0.2.1:443", "192.0.2.2:443"} {
		if !strings.Contains(cm.Data[HAProxyKey], want) {
			t.Errorf("haproxy.cfg lacks %s:\n%s", want, cm.Data[HAProxyKey])
		}
	}

	// Deleting the first object removes its entry at the next publish.
	if err := c.Delete(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, err := p.publish(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), p.proxyMap, cm); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cm.Data[HAProxyKey], "192.0.2.1:443") || !strings.Contains(cm.Data[HAProxyKey], "192.0.2.2:443") {
		t.Errorf("after deleting prod:\n%s", cm.Data[HAProxyKey])
	}
}
