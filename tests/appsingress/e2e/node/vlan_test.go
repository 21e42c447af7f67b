//go:build node

package node_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

const (
	vlanCluster = "vlan"
	// otherVLANCluster is on the other VLAN, with a router of its own there.
	otherVLANCluster = "vlan2"
	// recheck is the chart's recheckInterval in these tests: a hosted API server that stops shows within it.
	recheck = 10 * time.Second
)

// TestVLANAttachmentModes installs the chart in each way it offers to put CoreDNS on the VLAN, and proves for each,
// with dig, openssl and curl: a VLAN client gets the MetalLB address and reaches the router there; a Pod gets the
// proxy's address and reaches the same router through the chart's HAProxy, by SNI on 443 and by Host on 80, and the
// hosted API on 6443; a new MetalLB address changes both answers and the proxy's target, and the object is Ready only
// once both views answer it; a hosted API server that stops turns HostedClusterReachable false within the re-check
// period while the last good records stay. A second cluster on a second VLAN is served to that VLAN's client, and each
// VLAN's client gets REFUSED for the other cluster's names.
func TestVLANAttachmentModes(t *testing.T) {
	release := chartRelease(t)
	setUpVLAN(t)
	importProbeImage(t)
	apps := "apps." + vlanCluster + "." + localenv.BaseDomain
	startRouter(t, localenv.RouterA, "router-a", apps)
	startRouter(t, localenv.RouterB, "router-b", apps)
	startRouter(t, localenv.RouterC, "router-c", "apps."+otherVLANCluster+"."+localenv.BaseDomain)
	createVLANPools(t)
	probeNS := node.Namespace(t, "vlan-probe-")
	probe := runProbePod(t, probeNS)
	createVLANAttachments(t)

	common := map[string]any{"recheckInterval": recheck.String(), "hostedClusterTimeout": "3s"}
	for _, mode := range []struct {
		name   string
		values map[string]any
		// vlanDNS and otherVLANDNS are where each VLAN's clients send their questions (host, port), once installed.
		vlanDNS, otherVLANDNS func(t *testing.T) (string, string)
		// attached, when set, checks the Pods' attachment to the VLAN once installed.
		attached func(t *testing.T)
		// proxyOnVLAN, when set, is where the proxy listens on the VLAN (host:port of its HTTPS port).
		proxyOnVLAN string
		// rollout proves a rolling update of CoreDNS and HAProxy under requests (proveRollout); static is their
		// static VLAN addresses by Pod selector, which no two Pods may hold at once.
		rollout bool
		static  map[string]string
	}{
		{
			name: "Service with externalTrafficPolicy Local",
			values: map[string]any{"dns": map[string]any{
				"service": map[string]any{"type": "NodePort", "externalTrafficPolicy": "Local"},
			}},
			vlanDNS:      dnsNodePort(localenv.VLANNodeIP),
			otherVLANDNS: dnsNodePort(localenv.OtherVLANNodeIP),
		},
		{
			name: "hostNetwork",
			// One replica each: the node has one VLAN address and one set of ports.
			values: map[string]any{
				"dns": map[string]any{"hostNetwork": true, "replicaCount": 1,
					"vlanAddresses": []any{localenv.VLANNodeIP, localenv.OtherVLANNodeIP}},
				"proxy": map[string]any{"hostNetwork": true, "replicaCount": 1},
			},
			vlanDNS:      func(*testing.T) (string, string) { return localenv.VLANNodeIP, "53" },
			otherVLANDNS: func(*testing.T) (string, string) { return localenv.OtherVLANNodeIP, "53" },
			proxyOnVLAN:  net.JoinHostPort(localenv.VLANNodeIP, proxyHTTPSPort),
			rollout:      true,
		},
		{
			name: "secondary network (Multus)",
			// One replica each: an attachment has one static address.
			values: map[string]any{
				"dns": map[string]any{"replicaCount": 1, "vlanAddresses": []any{vlanDNSAddress, otherVLANDNSAddress},
					"podAnnotations": map[string]any{multusNetworks: multusSelection(t, map[string]string{
						vlanDNSAttachment: vlanDNSAddress, otherVLANDNSAttachment: otherVLANDNSAddress})}},
				"proxy": map[string]any{"replicaCount": 1, "podAnnotations": map[string]any{multusNetworks: multusSelection(t,
					map[string]string{vlanProxyAttachment: vlanProxyAddress})}},
			},
			vlanDNS:      func(*testing.T) (string, string) { return vlanDNSAddress, "53" },
			otherVLANDNS: func(*testing.T) (string, string) { return otherVLANDNSAddress, "53" },
			proxyOnVLAN:  net.JoinHostPort(vlanProxyAddress, proxyHTTPSPort),
			rollout:      true,
			static: map[string]string{
				"app.kubernetes.io/component=dns": vlanDNSAddress, "app.kubernetes.io/component=proxy": vlanProxyAddress,
			},
			attached: func(t *testing.T) {
				assertAttached(t, "app.kubernetes.io/component=dns", vlanDNSAttachment, vlanDNSAddress)
				assertAttached(t, "app.kubernetes.io/component=dns", otherVLANDNSAttachment, otherVLANDNSAddress)
				assertAttached(t, "app.kubernetes.io/component=proxy", vlanProxyAttachment, vlanProxyAddress)
			},
		},
	} {
		t.Run(mode.name, func(t *testing.T) {
			release.Upgrade(t, mode.name, nodetier.Merge(common, mode.values))
			t.Cleanup(func() { release.Upgrade(t, "defaults", nil) })
			if mode.attached != nil {
				mode.attached(t)
			}
			server, port := mode.vlanDNS(t)
			otherServer, otherPort := mode.otherVLANDNS(t)
			proveVLANMode(t, probeNS, probe, server, port, mode.proxyOnVLAN, func() {
				proveVLANsApart(t, server, port, otherServer, otherPort)
				if mode.rollout {
					name := "console-openshift-console." + apps
					proveRollout(t, release, nodetier.Merge(common, mode.values),
						vlanRolloutProbes(t, probeNS, probe, server, port, name, localenv.RouterB, "router-b"), mode.static)
				}
			})
		})
	}
}

// dnsNodePort is where a VLAN's clients ask the DNS Service: its node port on the node's address in that VLAN (address),
// as they would ask a load balancer's address there.
func dnsNodePort(address string) func(t *testing.T) (string, string) {
	return func(t *testing.T) (string, string) {
		svc, err := node.Kube.CoreV1().Services(nodeChart).Get(context.Background(), nodeChart+"-dns", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range svc.Spec.Ports {
			if p.Name == "dns" {
				return address, strconv.Itoa(int(p.NodePort))
			}
		}
		t.Fatalf("the DNS Service has no dns port: %v", svc.Spec.Ports)
		return "", ""
	}
}

// proveVLANsApart adds a second cluster on the other VLAN, the first one being served, and proves that each
// VLAN's client is served its own cluster and refused the other's names, apps and api alike: the answer it would
// otherwise get (the proxy's address) tells that the cluster exists and leads to its routes.
func proveVLANsApart(t *testing.T, server, port, otherServer, otherPort string) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: localenv.ClustersNS, Name: otherVLANCluster}
	created := time.Now()
	createVLANAppsIngressOn(t, otherVLANCluster, localenv.VLANPoolC, localenv.OtherVLANCIDR)
	waitAppsIngress(t, key, "Ready at "+localenv.RouterC, 3*time.Minute, func(phase string, ips []string) bool {
		return phase == "Ready" && strings.Join(ips, ",") == localenv.RouterC
	})
	t.Logf("the other VLAN's cluster created → Ready: %s", time.Since(created).Round(time.Millisecond))
	other := func(args ...string) (string, error) { return localenv.InOtherVLAN(ctx, args...) }
	vlan := func(args ...string) (string, error) { return localenv.InVLAN(ctx, args...) }
	name := func(cluster string) string {
		return "console-openshift-console.apps." + cluster + "." + localenv.BaseDomain
	}
	poll.Until(t, time.Minute, "the other VLAN's view answering "+localenv.RouterC, func() (bool, string, error) {
		out, err := other(localenv.DigArgs(otherServer, otherPort, name(otherVLANCluster))...)
		return err == nil && out == localenv.RouterC, out, nil
	})
	if out, err := other(localenv.SubjectArgs(localenv.RouterC+":443", name(otherVLANCluster))...); err != nil || out != "subject=CN = router-c" {
		t.Fatalf("TLS from the other VLAN to its cluster's router: %q (%v)", out, err)
	}
	for _, c := range []struct {
		client         string
		ask            func(...string) (string, error)
		server, port   string
		refusedCluster string
	}{
		{"the other VLAN's client", other, otherServer, otherPort, vlanCluster},
		{"the VLAN's client", vlan, server, port, otherVLANCluster},
	} {
		for _, n := range []string{name(c.refusedCluster), "api." + c.refusedCluster + "." + localenv.BaseDomain} {
			if out, err := c.ask(localenv.DigStatusArgs(c.server, c.port, n)...); out != "status: REFUSED" {
				t.Errorf("%s asking %s:%s for %s: %q (%v), want REFUSED", c.client, c.server, c.port, n, out, err)
			}
		}
	}
	deleting := time.Now()
	deleteAppsIngress(t, key)
	t.Logf("the other VLAN's cluster proven apart in %s, deleted in %s", deleting.Sub(created).Round(time.Millisecond),
		time.Since(deleting).Round(time.Millisecond))
}

// proxyHTTPSPort is the chart's HAProxy TLS port (on the node's ports under hostNetwork).
const proxyHTTPSPort = "8443"

// proveVLANMode proves one mode with the VLAN's cluster, calling andThen once it is Ready at its second address.
func proveVLANMode(t *testing.T, probeNS, probe, vlanServer, vlanPort, proxyOnVLAN string, andThen func()) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: localenv.ClustersNS, Name: vlanCluster}
	createVLANAppsIngress(t, localenv.VLANPoolA)
	waitAppsIngress(t, key, "Ready at "+localenv.RouterA, 3*time.Minute, func(phase string, ips []string) bool {
		return phase == "Ready" && strings.Join(ips, ",") == localenv.RouterA
	})
	name := "console-openshift-console.apps." + vlanCluster + "." + localenv.BaseDomain
	apiName := "api." + vlanCluster + "." + localenv.BaseDomain
	dnsSvc, err := node.Kube.CoreV1().Services(nodeChart).Get(ctx, nodeChart+"-dns", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	proxySvc, err := node.Kube.CoreV1().Services(nodeChart).Get(ctx, nodeChart+"-proxy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	proxyIP := proxySvc.Spec.ClusterIP
	inPod := func(args ...string) (string, error) {
		out, err := node.Cluster.Exec(ctx, probeNS, probe, "probe", args...)
		return strings.TrimSpace(out), err
	}
	expect := func(what string, run func(...string) (string, error), args []string, want string) {
		t.Helper()
		poll.Until(t, 2*time.Minute, what, func() (bool, string, error) {
			out, err := run(args...)
			return err == nil && out == want, out, nil
		})
	}
	vlan := func(args ...string) (string, error) { return localenv.InVLAN(ctx, args...) }

	// Ready means served: at this moment both views already answer. (The VLAN clients' listener of a hostNetwork
	// CoreDNS re-reads the zone file on its own, within the file plugin's reload interval of the one the operator
	// asked: a second at most.)
	if out, err := inPod(localenv.DigArgs(dnsSvc.Spec.ClusterIP, "53", name)...); err != nil || out != proxyIP {
		t.Fatalf("Ready, but the pod-network view answers %q (%v), not %s", out, err, proxyIP)
	}
	poll.Until(t, time.Second, "the VLAN view answering "+localenv.RouterA+" once Ready", func() (bool, string, error) {
		out, err := vlan(localenv.DigArgs(vlanServer, vlanPort, name)...)
		return err == nil && out == localenv.RouterA, out, nil
	})
	expect("TLS from the VLAN to the router", vlan, localenv.SubjectArgs(localenv.RouterA+":443", name), "subject=CN = router-a")
	expect("TLS from a Pod through the proxy", inPod, localenv.SubjectArgs(proxyIP+":443", name), "subject=CN = router-a")
	// The proxy, where it listens on the VLAN, refuses the VLAN's clients: through it they would reach every cluster.
	if proxyOnVLAN != "" {
		if out, err := vlan(localenv.SubjectArgs(proxyOnVLAN, name)...); err == nil || strings.Contains(out, "subject=") {
			t.Fatalf("a VLAN client reached %s through the proxy at %s: %q (%v), want the connection refused", name, proxyOnVLAN, out, err)
		}
	}
	// A name no hosted cluster publishes gets no route: the proxy ends the connection (it holds no certificate).
	unknown := "console-openshift-console.apps.unknown." + localenv.BaseDomain
	if out, err := inPod(localenv.SubjectArgs(proxyIP+":443", unknown)...); err == nil || strings.Contains(out, "subject=") {
		t.Fatalf("TLS from a Pod through the proxy for %s, which no cluster publishes: %q (%v), want the connection refused", unknown, out, err)
	}
	expect("HTTP from a Pod through the proxy", inPod, []string{"curl", "-s", "-m", "5", "-H", "Host: " + name, "http://" + proxyIP + "/"}, "router-a")
	// Where the proxy listens on the VLAN, it reaches the routers through that leg too (its address there is the
	// source the router sees), not back through the node's pod network.
	if proxyOnVLAN != "" {
		leg, _, _ := net.SplitHostPort(proxyOnVLAN)
		expect("the proxy reaching the router from its VLAN address", inPod, []string{"curl", "-s", "-m", "5", "-H", "Host: " + name,
			"http://" + proxyIP + localenv.RouterSourcePath}, leg)
	}
	expect("the hosted API from a Pod through the proxy", inPod, []string{"curl", "-sk", "-m", "5",
		"--resolve", apiName + ":6443:" + proxyIP, "https://" + apiName + ":6443/readyz"}, "ok")
	expect("the hosted API's own address from the VLAN", vlan, localenv.DigArgs(vlanServer, vlanPort, apiName), devcluster.HostIP)

	// A new MetalLB address: the object waits for both views, which then answer it, and the proxy routes to it.
	changed := time.Now()
	patchPool(t, key, localenv.VLANPoolB)
	waitAppsIngress(t, key, "Ready at "+localenv.RouterB, 3*time.Minute, func(phase string, ips []string) bool {
		return phase == "Ready" && strings.Join(ips, ",") == localenv.RouterB
	})
	ready := time.Since(changed)
	if out, err := inPod(localenv.DigArgs(dnsSvc.Spec.ClusterIP, "53", name)...); err != nil || out != proxyIP {
		t.Fatalf("Ready at %s, but the pod-network view answers %q (%v)", localenv.RouterB, out, err)
	}
	poll.Until(t, time.Second, "the VLAN view answering "+localenv.RouterB+" once Ready", func() (bool, string, error) {
		out, err := vlan(localenv.DigArgs(vlanServer, vlanPort, name)...)
		return err == nil && out == localenv.RouterB, out, nil
	})
	expect("TLS from the VLAN to the new address", vlan, localenv.SubjectArgs(localenv.RouterB+":443", name), "subject=CN = router-b")
	expect("TLS from a Pod through the proxy to the new address", inPod, localenv.SubjectArgs(proxyIP+":443", name), "subject=CN = router-b")
	t.Logf("MetalLB address changed → Ready with both views answering it: %s", ready.Round(time.Millisecond))
	andThen()

	// The hosted API server stops; nothing else changes.
	if err := env.Hosted.StopComponent(devcluster.ComponentAPIServer); err != nil {
		t.Fatal(err)
	}
	stopped, restarted := time.Now(), false
	t.Cleanup(func() {
		if !restarted {
			if err := env.Hosted.StartComponent(context.Background(), devcluster.ComponentAPIServer); err != nil {
				t.Error(err)
			}
		}
	})
	waitCondition(t, key, "HostedClusterReachable", "False", recheck+recheck/10+30*time.Second)
	t.Logf("hosted API server stopped → HostedClusterReachable=False in %s (re-check every %s)", time.Since(stopped).Round(time.Millisecond), recheck)
	if out, err := vlan(localenv.DigArgs(vlanServer, vlanPort, name)...); err != nil || out != localenv.RouterB {
		t.Fatalf("the last good record is gone from the VLAN view: %q (%v)", out, err)
	}
	if err := env.Hosted.StartComponent(ctx, devcluster.ComponentAPIServer); err != nil {
		t.Fatal(err)
	}
	restarted = true
	waitAppsIngress(t, key, "Ready again", 3*time.Minute, func(phase string, _ []string) bool { return phase == "Ready" })
	deleteAppsIngress(t, key)
}

func createVLANPools(t *testing.T) {
	t.Helper()
	if err := env.CreateVLANPools(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func createVLANAppsIngress(t *testing.T, pool string) {
	t.Helper()
	createVLANAppsIngressOn(t, vlanCluster, pool, localenv.NodeVLANCIDR)
}

// createVLANAppsIngressOn creates the AppsIngress of cluster name for the VLAN of cidr, deleted when the test ends.
func createVLANAppsIngressOn(t *testing.T, name, pool, cidr string) {
	t.Helper()
	if err := env.CreateVLANAppsIngress(context.Background(), name, pool, cidr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAppsIngress(t, types.NamespacedName{Namespace: localenv.ClustersNS, Name: name}) })
}

func patchPool(t *testing.T, key types.NamespacedName, pool string) {
	t.Helper()
	if err := env.SetPool(context.Background(), key.Name, pool); err != nil {
		t.Fatal(err)
	}
}

func deleteAppsIngress(t *testing.T, key types.NamespacedName) {
	t.Helper()
	ctx := context.Background()
	res := node.Dyn.Resource(localenv.AppsIngressGVR).Namespace(key.Namespace)
	if err := res.Delete(ctx, key.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	poll.Until(t, 2*time.Minute, "AppsIngress "+key.String()+" gone", func() (bool, string, error) {
		_, err := res.Get(ctx, key.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
}

// waitAppsIngress waits until cond holds of the object's phase and externalIPs.
func waitAppsIngress(t *testing.T, key types.NamespacedName, what string, timeout time.Duration, cond func(phase string, ips []string) bool) {
	t.Helper()
	poll.Until(t, timeout, key.String()+" "+what, func() (bool, string, error) {
		ai, err := node.Dyn.Resource(localenv.AppsIngressGVR).Namespace(key.Namespace).Get(context.Background(), key.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		phase, _, _ := unstructured.NestedString(ai.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(ai.Object, "status", "message")
		ips, _, _ := unstructured.NestedStringSlice(ai.Object, "status", "externalIPs")
		return cond(phase, ips), phase + ": " + msg, nil
	})
}

func waitCondition(t *testing.T, key types.NamespacedName, typ, status string, timeout time.Duration) {
	t.Helper()
	poll.Until(t, timeout, key.String()+" "+typ+"="+status, func() (bool, string, error) {
		ai, err := node.Dyn.Resource(localenv.AppsIngressGVR).Namespace(key.Namespace).Get(context.Background(), key.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		conds, _, _ := unstructured.NestedSlice(ai.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == typ {
				return m["status"] == status, fmt.Sprintf("%v %v: %v", m["status"], m["reason"], m["message"]), nil
			}
		}
		return false, "no condition", nil
	})
}
