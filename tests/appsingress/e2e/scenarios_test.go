//go:build e2e

package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/controller"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/fixture"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

// TestBadSpecsAreRejectedByTheAPIServer sends the invalid objects of the unit test to the real kube-apiserver.
func TestBadSpecsAreRejectedByTheAPIServer(t *testing.T) {
	valid := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(fixture.Valid), &valid.Object); err != nil {
		t.Fatal(err)
	}
	valid.SetName("valid")
	if _, err := mgmtDyn.Resource(appsIngressGVR).Namespace(clustersNS).Create(context.Background(), valid, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("the valid example is rejected: %v", err)
	}
	for _, c := range fixture.BadSpecs {
		t.Run(c.Name, func(t *testing.T) {
			obj := valid.DeepCopy()
			c.Mutate(obj.Object["spec"].(map[string]any))
			_, err := mgmtDyn.Resource(appsIngressGVR).Namespace(clustersNS).Create(context.Background(), obj, metav1.CreateOptions{})
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.Want) {
				t.Fatalf("error does not name %q: %v", c.Want, err)
			}
		})
	}
	t.Run("hostedClusterRef is immutable", func(t *testing.T) {
		ctx := context.Background()
		obj := valid.DeepCopy()
		obj.SetName("immutable")
		if _, err := mgmtDyn.Resource(appsIngressGVR).Namespace(clustersNS).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deleteAndWait(t, types.NamespacedName{Namespace: clustersNS, Name: "immutable"}) })
		_, err := mgmtDyn.Resource(appsIngressGVR).Namespace(clustersNS).Patch(ctx, "immutable", types.MergePatchType,
			[]byte(`{"spec":{"hostedClusterRef":{"name":"other"}}}`), metav1.PatchOptions{})
		if err == nil || !strings.Contains(err.Error(), "spec.hostedClusterRef is immutable") {
			t.Fatalf("changing hostedClusterRef: %v", err)
		}
	})
}

// TestMetalLBNotInstalled points an AppsIngress at a cluster without MetalLB's CRDs (the management cluster itself).
func TestMetalLBNotInstalled(t *testing.T) {
	c := mgmtClient(t)
	key := types.NamespacedName{Namespace: clustersNS, Name: "nometallb"}
	putKubeconfigSecret(t, "nometallb-admin-kubeconfig", readKubeconfig(t, mgmt.Kubeconfig()))
	createHostedCluster(t, "nometallb", "nometallb-admin-kubeconfig", env.HostedAPIEndpoint())
	if err := c.Create(context.Background(), newAppsIngress("nometallb", "nometallb", poolA)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAndWait(t, key) })
	ai := waitFor(t, c, key, "Degraded/MetalLBNotInstalled", time.Minute, phaseIs(v1alpha1.PhaseDegraded, "MetalLBNotInstalled"))
	if !strings.Contains(ai.Status.Message, "never installs") {
		t.Errorf("message %q", ai.Status.Message)
	}
	if _, err := mgmtKube.CoreV1().Services(routerNS).Get(context.Background(), "nometallb-apps", metav1.GetOptions{}); err == nil {
		t.Fatal("a Service was created although MetalLB is missing")
	}
}

// TestServiceNotOwnedIsLeftAlone: a Service of the same name that the operator did not create is neither changed nor
// deleted.
func TestServiceNotOwnedIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	c := mgmtClient(t)
	const name = "taken"
	key := types.NamespacedName{Namespace: clustersNS, Name: name}
	theirs := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: routerNS, Name: name + "-apps", Labels: map[string]string{"owner": "someone-else"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{"app": "theirs"},
			Ports: []corev1.ServicePort{{Name: "web", Port: 9999}}},
	}
	if _, err := hostedKube.CoreV1().Services(routerNS).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = hostedKube.CoreV1().Services(routerNS).Delete(context.Background(), name+"-apps", metav1.DeleteOptions{})
	})
	if err := startMetalLB(ctx); err != nil {
		t.Fatal(err)
	}
	createAppsIngress(t, name, poolA, nil)
	waitFor(t, c, key, "Degraded/ServiceNotOwned", time.Minute, phaseIs(v1alpha1.PhaseDegraded, "ServiceNotOwned"))
	deleteAndWait(t, key)
	got, err := hostedService(t, name+"-apps")
	if err != nil {
		t.Fatalf("the operator deleted a Service it does not own: %v", err)
	}
	if got.Spec.Type != corev1.ServiceTypeClusterIP || got.Spec.Selector["app"] != "theirs" || got.Annotations[controller.OwnerAnnotation] != "" {
		t.Fatalf("the operator changed a Service it does not own: %+v", got)
	}
}

// TestTwoClustersSideBySide: two AppsIngresses (two clusters' names, two Services in the same hosted devcluster), each
// on a VLAN of its own, get their own IPs, records and routes; a client of one VLAN gets REFUSED for the other
// cluster's names (apps and api), and the proxy refuses both; deleting one leaves the other's.
func TestTwoClustersSideBySide(t *testing.T) {
	ctx := context.Background()
	c := mgmtClient(t)
	if err := startMetalLB(ctx); err != nil {
		t.Fatal(err)
	}
	ips := map[string]string{}
	routers := map[string]*router{}
	clients := map[string]string{"east": vlanClient, "west": otherVLANClient}
	other := map[string]string{"east": "west", "west": "east"}
	createAppsIngress(t, "east", poolA, nil)
	createAppsIngress(t, "west", poolA, func(ai *v1alpha1.AppsIngress) { ai.Spec.DNS.VLANCIDRs = []string{otherVLANCIDR} })
	for _, name := range []string{"east", "west"} {
		ai := waitFor(t, c, types.NamespacedName{Namespace: clustersNS, Name: name}, "Ready", time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))
		ips[name] = mustOneIP(t, ai, poolARange)
		routers[name] = startRouter(t, ips[name], name)
	}
	if ips["east"] == ips["west"] {
		t.Fatalf("both clusters got %s", ips["east"])
	}
	for _, name := range []string{"east", "west"} {
		host := "x.apps." + name + "." + baseDomain
		waitDNS(t, clients[name], host, []string{ips[name]})
		waitDNS(t, podClient, host, []string{proxyIP})
		waitTLSRoute(t, proxyPorts.https, host, routers[name].cert)
		// The other VLAN's client learns nothing of this cluster: not its address, nor the proxy's (which would tell
		// that the cluster exists), for its routes or its API.
		for _, n := range []string{host, "api." + name + "." + baseDomain} {
			waitRefused(t, clients[other[name]], n)
		}
		// A client of either VLAN is refused by the proxy: its DNS view gives it its cluster's own address, and
		// through the proxy it could reach every other cluster's routes, those of other VLANs included.
		for _, src := range clients {
			for _, port := range []int{proxyPorts.https, proxyPorts.api} {
				if cert, _, err := tlsThroughProxyFrom(src, port, host); err == nil {
					t.Fatalf("a VLAN client (%s) reached %q through the proxy's port %d", src, cert.Subject.CommonName, port)
				}
			}
		}
	}
	deleteAndWait(t, types.NamespacedName{Namespace: clustersNS, Name: "east"})
	waitDNS(t, vlanClient, "x.apps.east."+baseDomain, nil)
	waitDNS(t, otherVLANClient, "x.apps.west."+baseDomain, []string{ips["west"]})
	waitTLSRoute(t, proxyPorts.https, "x.apps.west."+baseDomain, routers["west"].cert)
	deleteAndWait(t, types.NamespacedName{Namespace: clustersNS, Name: "west"})
	noSyncErrors(t)
}

func deleteAndWait(t *testing.T, key types.NamespacedName) {
	t.Helper()
	c := mgmtClient(t)
	if err := c.Delete(context.Background(), &v1alpha1.AppsIngress{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
		t.Logf("deleting %s: %v", key, err)
	}
	waitGone(t, c, key)
}

func readKubeconfig(t *testing.T, path string) []byte {
	t.Helper()
	return []byte(readFile(path))
}

// TestDeletionIsBoundedWhenTheHostedClusterIsGone: without the HostedCluster the finalizer goes at once; with a
// hosted API server that does not answer, after the cleanup timeout (20s here). The entries go first either way.
func TestDeletionIsBoundedWhenTheHostedClusterIsGone(t *testing.T) {
	ctx := context.Background()
	c := mgmtClient(t)
	if err := startMetalLB(ctx); err != nil {
		t.Fatal(err)
	}
	const name = "gone"
	key := types.NamespacedName{Namespace: clustersNS, Name: name}
	createAppsIngress(t, name, poolA, nil)
	ai := waitFor(t, c, key, "Ready", time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))
	waitDNS(t, vlanClient, "x.apps."+name+"."+baseDomain, ai.Status.ExternalIPs)

	t.Log("the kubeconfig points at a port nobody listens on: deletion waits for the cleanup timeout, then goes")
	dead := strings.Replace(string(hostedKubeconfig(t)), env.HostedAPIEndpoint(), "127.0.0.1:1", 1)
	putKubeconfigSecret(t, name+"-admin-kubeconfig", []byte(dead))
	waitFor(t, c, key, "Degraded/HostedClusterUnreachable", time.Minute, phaseIs(v1alpha1.PhaseDegraded, "HostedClusterUnreachable"))
	start := time.Now()
	if err := c.Delete(ctx, &v1alpha1.AppsIngress{ObjectMeta: metav1.ObjectMeta{Namespace: clustersNS, Name: name}}); err != nil {
		t.Fatal(err)
	}
	waitDNS(t, vlanClient, "x.apps."+name+"."+baseDomain, nil)
	waitGone(t, c, key)
	if took := time.Since(start); took < 15*time.Second {
		t.Fatalf("deletion took %s: it did not try to delete the hosted Service for the cleanup timeout", took)
	}
	// The Service is left behind in the (still running) hosted cluster: the operator could not reach it.
	if _, err := hostedService(t, name+"-apps"); err != nil {
		t.Fatalf("the hosted Service: %v", err)
	}
	_ = hostedKube.CoreV1().Services(routerNS).Delete(ctx, name+"-apps", metav1.DeleteOptions{})

	t.Log("without its HostedCluster, deletion does not wait")
	const name2 = "gone2"
	key2 := types.NamespacedName{Namespace: clustersNS, Name: name2}
	createAppsIngress(t, name2, poolA, nil)
	waitFor(t, c, key2, "Ready", time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))
	if err := mgmtDyn.Resource(localenv.HostedClusterGVR).Namespace(clustersNS).Delete(ctx, name2, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := waitFor(t, c, key2, "Degraded/HostedClusterNotFound", time.Minute, phaseIs(v1alpha1.PhaseDegraded, "HostedClusterNotFound"))
	// A deleted HostedCluster's names stop answering while its AppsIngress still exists.
	waitDNS(t, vlanClient, "x.apps."+name2+"."+baseDomain, nil)
	if len(gone.Status.ExternalIPs) != 0 {
		t.Fatalf("status.externalIPs %v kept for a deleted HostedCluster", gone.Status.ExternalIPs)
	}
	start = time.Now()
	deleteAndWait(t, key2)
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("deletion without a HostedCluster took %s", took)
	}
	waitDNS(t, vlanClient, "x.apps."+name2+"."+baseDomain, nil)
	_ = hostedKube.CoreV1().Services(routerNS).Delete(ctx, name2+"-apps", metav1.DeleteOptions{})
	noSyncErrors(t)
}
