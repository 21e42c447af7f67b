//go:build e2e

package e2e_test

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
)

// TestLifecycle follows one hosted cluster through the life the issue lists: Pending until MetalLB assigns an IP,
// Ready with both DNS views and both proxy routes working, the IP changing, the hosted API server going away and
// coming back, the kubeconfig Secret missing and rotated, suspend, and deletion.
func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	c := mgmtClient(t)
	const cluster = "c1"
	key := types.NamespacedName{Namespace: clustersNS, Name: cluster}
	apps := "console-openshift-console.apps." + cluster + "." + baseDomain
	api := "api." + cluster + "." + baseDomain

	stopMetalLB() // MetalLB comes later: first the object must wait for it.
	createAppsIngress(t, cluster, poolA, nil)

	t.Log("Pending until an IP is assigned; the Service exists in the hosted cluster with the pool annotation")
	waitFor(t, c, key, "Pending/ExternalIPPending", time.Minute, phaseIs(v1alpha1.PhasePending, "ExternalIPPending"))
	svc, err := hostedService(t, cluster+"-apps")
	if err != nil {
		t.Fatal(err)
	}
	if svc.Annotations["metallb.io/address-pool"] != poolA || svc.Annotations[controller.OwnerAnnotation] != key.String() {
		t.Fatalf("Service annotations %v", svc.Annotations)
	}
	if !slices.ContainsFunc(svc.ManagedFields, func(m metav1.ManagedFieldsEntry) bool {
		return m.Manager == controller.FieldManager && m.Operation == metav1.ManagedFieldsOperationApply
	}) {
		t.Fatalf("the Service was not server-side applied by %s: %+v", controller.FieldManager, svc.ManagedFields)
	}
	if _, got := lookup(t, vlanClient, apps, dnsmessage.TypeA); len(got) != 0 {
		t.Fatalf("DNS answers %v before an IP is assigned", got)
	}

	if err := startMetalLB(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ai := waitFor(t, c, key, "Ready", time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))
	t.Logf("Ready %s after MetalLB started, externalIPs %v", time.Since(start).Round(time.Millisecond), ai.Status.ExternalIPs)
	ip := mustOneIP(t, ai, poolARange)
	for _, typ := range []string{"HostedClusterReachable", "ServiceReady", "ExternalIPAssigned", "DNSConfigured", "ProxyConfigured", "Ready"} {
		if got := conditionStatus(ai, typ); !strings.HasPrefix(got, "True/") {
			t.Errorf("condition %s is %s", typ, got)
		}
	}
	if ai.Status.APIEndpoint != env.HostedAPIEndpoint() {
		t.Errorf("apiEndpoint %q, want %q", ai.Status.APIEndpoint, env.HostedAPIEndpoint())
	}

	t.Log("split-horizon DNS from the real CoreDNS")
	waitDNS(t, vlanClient, apps, []string{ip})
	waitDNS(t, podClient, apps, []string{proxyIP})
	waitDNS(t, podClient, api, []string{proxyIP})
	waitDNS(t, vlanClient, "a.b.apps."+cluster+"."+baseDomain, []string{ip})

	t.Log("the real HAProxy passes TLS through by SNI, HTTP by Host, and the API by SNI")
	r := startRouter(t, ip, cluster)
	body := waitTLSRoute(t, proxyPorts.https, apps, r.cert)
	if !strings.Contains(body, "router c1") || !strings.Contains(body, "tls true") {
		t.Fatalf("TLS request answered %q", body)
	}
	code, body, err := httpThroughProxy(apps)
	if err != nil || code != 200 || !strings.Contains(body, "router c1 host "+apps) {
		t.Fatalf("HTTP by Host: %d %q %v", code, body, err)
	}
	if code, _, _ := httpThroughProxy("console.apps.unknown." + baseDomain); code != 503 {
		t.Fatalf("HTTP for an unknown cluster: %d, want 503", code)
	}
	apiCert := hostedServingCert(t)
	waitTLSRoute(t, proxyPorts.api, api, apiCert)
	// An API published on 443 is asked for on the apps port: the api name is routed there too.
	waitTLSRoute(t, proxyPorts.https, api, apiCert)
	noSyncErrors(t)

	t.Log("IP change: another pool; DNS and proxy follow")
	patch(t, c, key, func(ai *v1alpha1.AppsIngress) { ai.Spec.MetalLB.AddressPoolName = poolB })
	start = time.Now()
	ai = waitFor(t, c, key, "Ready with a pool B address", time.Minute, func(ai *v1alpha1.AppsIngress) bool {
		return phaseIs(v1alpha1.PhaseReady, "Ready")(ai) && len(ai.Status.ExternalIPs) == 1 && ai.Status.ExternalIPs[0] != ip
	})
	t.Logf("new IP %v after %s", ai.Status.ExternalIPs, time.Since(start).Round(time.Millisecond))
	ip2 := mustOneIP(t, ai, poolBRange)
	waitDNS(t, vlanClient, apps, []string{ip2})
	r2 := startRouter(t, ip2, cluster)
	waitTLSRoute(t, proxyPorts.https, apps, r2.cert)

	t.Log("hosted API server stopped: Degraded, DNS and proxy unchanged; then recovery")
	dnsBefore, proxyBefore := rendered(t, dnsMapName), rendered(t, proxyMapName)
	if err := hostedCl.StopComponent(devcluster.ComponentAPIServer); err != nil {
		t.Fatal(err)
	}
	apiserverStopped := true
	defer func() {
		if apiserverStopped {
			_ = hostedCl.StartComponent(context.Background(), devcluster.ComponentAPIServer)
		}
	}()
	// A spec change makes the operator look now rather than at its next resync.
	patch(t, c, key, func(ai *v1alpha1.AppsIngress) { ai.Spec.Service.Selector = map[string]string{"router": "default"} })
	waitFor(t, c, key, "Degraded/HostedClusterUnreachable", time.Minute, phaseIs(v1alpha1.PhaseDegraded, "HostedClusterUnreachable"))
	if rendered(t, dnsMapName) != dnsBefore || rendered(t, proxyMapName) != proxyBefore {
		t.Fatal("the DNS or proxy ConfigMap changed while the hosted cluster was unreachable")
	}
	waitDNS(t, vlanClient, apps, []string{ip2})
	waitTLSRoute(t, proxyPorts.https, apps, r2.cert)
	if err := hostedCl.StartComponent(ctx, devcluster.ComponentAPIServer); err != nil {
		t.Fatal(err)
	}
	apiserverStopped = false
	waitFor(t, c, key, "Ready again", 2*time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))
	svc, err = hostedService(t, cluster+"-apps")
	if err != nil || svc.Spec.Selector["router"] != "default" {
		t.Fatalf("the selector change made while unreachable was not applied on recovery: %v %v", svc.Spec.Selector, err)
	}

	t.Log("kubeconfig Secret deleted: Degraded, entries kept; a rotated kubeconfig recovers")
	if err := mgmtKube.CoreV1().Secrets(clustersNS).Delete(ctx, cluster+"-admin-kubeconfig", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, key, "Degraded/KubeconfigMissing", time.Minute, phaseIs(v1alpha1.PhaseDegraded, "KubeconfigMissing"))
	waitDNS(t, vlanClient, apps, []string{ip2})
	putKubeconfigSecret(t, cluster+"-admin-kubeconfig", rotatedKubeconfig(t))
	waitFor(t, c, key, "Ready with the rotated kubeconfig", time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))

	t.Log("suspend: nothing is reconciled, entries stay")
	patch(t, c, key, func(ai *v1alpha1.AppsIngress) { ai.Spec.Suspend = true })
	waitFor(t, c, key, "Pending/Suspended", time.Minute, phaseIs(v1alpha1.PhasePending, "Suspended"))
	if err := hostedKube.CoreV1().Services(routerNS).Delete(ctx, cluster+"-apps", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if _, err := hostedService(t, cluster+"-apps"); err == nil {
		t.Fatal("a suspended AppsIngress recreated its Service")
	}
	waitDNS(t, vlanClient, apps, []string{ip2})
	patch(t, c, key, func(ai *v1alpha1.AppsIngress) { ai.Spec.Suspend = false })
	waitFor(t, c, key, "Ready after resume", time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))
	if _, err := hostedService(t, cluster+"-apps"); err != nil {
		t.Fatalf("the Service was not recreated on resume: %v", err)
	}

	t.Log("deletion removes the Service and the entries")
	if err := c.Delete(ctx, &v1alpha1.AppsIngress{ObjectMeta: metav1.ObjectMeta{Namespace: clustersNS, Name: cluster}}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, c, key)
	if _, err := hostedService(t, cluster+"-apps"); err == nil {
		t.Fatal("the hosted Service survived the deletion")
	}
	waitDNS(t, vlanClient, apps, nil)
	waitDNS(t, podClient, api, nil)
	if strings.Contains(rendered(t, proxyMapName), ".apps.c1.") {
		t.Fatal("the proxy configuration still routes c1")
	}
	noSyncErrors(t)
}

func mustOneIP(t *testing.T, ai *v1alpha1.AppsIngress, poolRange string) string {
	t.Helper()
	if len(ai.Status.ExternalIPs) != 1 {
		t.Fatalf("externalIPs %v, want one", ai.Status.ExternalIPs)
	}
	ip := netip.MustParseAddr(ai.Status.ExternalIPs[0])
	first, last, _ := strings.Cut(poolRange, "-")
	if ip.Compare(netip.MustParseAddr(first)) < 0 || ip.Compare(netip.MustParseAddr(last)) > 0 {
		t.Fatalf("external IP %s is not from MetalLB's pool %s", ip, poolRange)
	}
	return ip.String()
}

func patch(t *testing.T, c client.Client, key types.NamespacedName, mutate func(*v1alpha1.AppsIngress)) {
	t.Helper()
	ai := &v1alpha1.AppsIngress{}
	if err := c.Get(context.Background(), key, ai); err != nil {
		t.Fatal(err)
	}
	before := ai.DeepCopy()
	mutate(ai)
	if err := c.Patch(context.Background(), ai, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

func waitGone(t *testing.T, c client.Client, key types.NamespacedName) {
	t.Helper()
	poll.Until(t, time.Minute, key.String()+" deleted (its finalizer removed)", func() (bool, string, error) {
		return c.Get(context.Background(), key, &v1alpha1.AppsIngress{}) != nil, "still there", nil
	})
}
