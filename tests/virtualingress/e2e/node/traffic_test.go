//go:build node

package node_test

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualingress/traffic"
)

// trafficController is the Traefik every traffic test sends its requests through (started by TestChartOnNode).
var trafficController *traffic.Controller

const trafficDomain = "traffic.test"

// tenant is one namespace with three echo backends (coder, api, docs), each behind a Service that carries the label
// tenant-service=<backend> under a random name, as the Kubevirt CCM mirrors them.
type tenant struct {
	ns string
}

func newTenant(t *testing.T) tenant {
	t.Helper()
	ctx := context.Background()
	tn := tenant{ns: newNodeNamespace(t)}
	for _, b := range []string{"coder", "api", "docs"} {
		if err := traffic.RunBackend(ctx, node.Kube, tn.ns, b); err != nil {
			t.Fatalf("%v\n%s", err, node.PodReport(tn.ns))
		}
		if _, err := node.Kube.CoreV1().Services(tn.ns).Create(ctx, traffic.TenantService(selects(b), b), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return tn
}

func selects(backend string) map[string]string { return map[string]string{"tenant-service": backend} }

func host(name string) string { return name + "." + trafficDomain }

// testTraffic sends requests through Traefik to what the chart's policies generated: Ingresses and HTTPRoutes, over
// HTTP and TLS, and checks the status a real Gateway controller gives a VirtualHTTPRoute.
func testTraffic(t *testing.T) {
	tn := newTenant(t)
	t.Run("ingress routes hosts and paths to the selected Services", func(t *testing.T) { testIngressHTTP(t, tn) })
	t.Run("ingress tls serves the VirtualIngress's certificate", func(t *testing.T) { testIngressTLS(t, tn) })
	t.Run("httproute over the Gateway's HTTP and HTTPS listeners", func(t *testing.T) { testRouteTraffic(t, tn) })
	t.Run("route status is the Gateway controller's", func(t *testing.T) { t.Parallel(); testRouteStatusForReal(t, tn) })
	t.Run("the generated Ingress stays quiet once the controller wrote its status", func(t *testing.T) {
		t.Parallel()
		testQuietIngress(t, tn)
	})
}

// expect polls path of host through client until the answer comes from backend ("" expects the controller's 404).
func expect(t *testing.T, client *traffic.Client, hostname, path, backend string) traffic.Response {
	t.Helper()
	var got traffic.Response
	poll.Until(t, time.Minute, fmt.Sprintf("GET %s%s answered by %q", hostname, path, backend), func() (bool, string, error) {
		var err error
		got, err = client.Get(context.Background(), hostname, path)
		if err != nil {
			return false, err.Error(), nil
		}
		if backend == "" {
			return got.Status == http.StatusNotFound && got.Backend == "", fmt.Sprintf("%d %q", got.Status, got.Body), nil
		}
		return got.Backend == backend, fmt.Sprintf("%d %q", got.Status, got.Body), nil
	})
	return got
}

func createVirtualIngress(t *testing.T, ns, name string, spec map[string]any) {
	t.Helper()
	if _, err := node.Dyn.Resource(virtualingress.GVR).Namespace(ns).Create(context.Background(),
		virtualingress.New(ns, name, spec), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, "VirtualIngress "+name, func() (*unstructured.Unstructured, error) {
		return node.Dyn.Resource(virtualingress.GVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	}, "True", "IngressUpToDate", "")
}

func testIngressHTTP(t *testing.T, tn tenant) {
	createVirtualIngress(t, tn.ns, "site", map[string]any{
		"ingressClassName": traffic.Class,
		"rules": []any{
			virtualingress.Rule(host("coder"), virtualingress.Path("/", virtualingress.SelectorBackend(selects("coder"), 80))),
			virtualingress.Rule(host("docs"),
				virtualingress.Path("/api", virtualingress.SelectorBackend(selects("api"), 80)),
				virtualingress.Path("/", virtualingress.SelectorBackend(selects("docs"), 80))),
		},
	})
	client := traffic.NewClient(trafficController.HTTP)
	expect(t, client, host("coder"), "/", "coder")
	expect(t, client, host("docs"), "/api/v1", "api")
	expect(t, client, host("docs"), "/", "docs")
	expect(t, client, host("nobody"), "/", "")
}

func testIngressTLS(t *testing.T, tn tenant) {
	ctx := context.Background()
	certPEM, keyPEM, roots, err := traffic.SelfSigned(host("secure"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.Kube.CoreV1().Secrets(tn.ns).Create(ctx, traffic.TLSSecret("secure-tls", certPEM, keyPEM), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createVirtualIngress(t, tn.ns, "secure", map[string]any{
		"ingressClassName": traffic.Class,
		"tls":              []any{map[string]any{"hosts": []any{host("secure")}, "secretName": "secure-tls"}},
		"rules":            []any{virtualingress.Rule(host("secure"), virtualingress.Path("/", virtualingress.SelectorBackend(selects("coder"), 80)))},
	})
	// The client trusts only this test's certificate: an answer at all proves the controller served it for the SNI.
	got := expect(t, traffic.NewTLSClient(trafficController.HTTPS, roots), host("secure"), "/", "coder")
	block, _ := pem.Decode(certPEM)
	if got.Certificate == nil || !bytes.Equal(got.Certificate.Raw, block.Bytes) {
		t.Fatalf("served certificate %v, want the Secret's for %s", got.Certificate, host("secure"))
	}
}

func testRouteTraffic(t *testing.T, tn tenant) {
	hostname := "app" + strings.TrimPrefix(traffic.GatewayHostnames, "*")
	route := createRoute(t, tn.ns, "app", map[string]any{
		"parentRefs": []any{traffic.ParentRef(traffic.ListenerHTTP), traffic.ParentRef(traffic.ListenerHTTPS)},
		"hostnames":  []any{hostname},
		"rules":      []any{map[string]any{"backendRefs": []any{virtualingress.SelectorBackendRef(selects("coder"), "http")}}},
	})
	waitRoute(t, tn.ns, "app", "True", "HTTPRouteUpToDate", "")
	assertParentsFromTraefik(t, route)
	expect(t, traffic.NewClient(trafficController.HTTP), hostname, "/", "coder")
	got := expect(t, traffic.NewTLSClient(trafficController.HTTPS, trafficController.GatewayRoots), hostname, "/", "coder")
	if got.Certificate == nil || got.Certificate.Subject.CommonName != traffic.GatewayHostnames {
		t.Fatalf("served certificate %v, want the Gateway listener's", got.Certificate)
	}
}

// testRouteStatusForReal: no test writes a route's status; Traefik does, or nobody does.
func testRouteStatusForReal(t *testing.T, tn tenant) {
	ctx := context.Background()
	coder := []any{map[string]any{"backendRefs": []any{virtualingress.SelectorBackendRef(selects("coder"), "http")}}}
	gateways := node.Dyn.Resource(traffic.GatewayGVR).Namespace(tn.ns)

	// A parent Gateway that does not exist yet: nobody reports, so not Ready; once it exists Traefik accepts.
	createRoute(t, tn.ns, "late", map[string]any{
		"parentRefs": []any{map[string]any{"name": "late"}}, "hostnames": []any{host("late")}, "rules": coder})
	waitRoute(t, tn.ns, "late", "False", "NoGatewayStatus", "")
	listener := func(allowed string) []any {
		return []any{map[string]any{"name": traffic.ListenerHTTP, "port": trafficController.HTTPPort, "protocol": "HTTP", "hostname": host("late"),
			"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": allowed}}}}
	}
	if _, err := gateways.Create(ctx, traffic.NewGateway(tn.ns, "late", listener("Same")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRoute(t, tn.ns, "late", "True", "HTTPRouteUpToDate", "")
	expect(t, traffic.NewClient(trafficController.HTTP), host("late"), "/", "coder")

	// A Gateway that admits routes of its own namespace only refuses this one.
	if _, err := node.Dyn.Resource(traffic.GatewayGVR).Namespace(traffic.Namespace).Create(ctx,
		traffic.NewGateway(traffic.Namespace, "own-only-"+tn.ns, listener("Same")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createRoute(t, tn.ns, "refused", map[string]any{
		"parentRefs": []any{map[string]any{"name": "own-only-" + tn.ns, "namespace": traffic.Namespace}}, "rules": coder})
	waitRoute(t, tn.ns, "refused", "False", "NotAccepted", "NotAllowedByListeners")

	// A backend Service that does not exist: accepted, references not resolved.
	createRoute(t, tn.ns, "dangling", map[string]any{
		"parentRefs": []any{traffic.ParentRef(traffic.ListenerHTTP)}, "hostnames": []any{host("dangling")},
		"rules": []any{map[string]any{"backendRefs": []any{
			virtualingress.SelectorBackendRef(selects("coder"), "http"),
			map[string]any{"name": "no-such-service", "port": int64(80)},
		}}}})
	waitRoute(t, tn.ns, "dangling", "False", "RefsNotResolved", "BackendNotFound")
}

func createRoute(t *testing.T, ns, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	route, err := node.Dyn.Resource(virtualingress.RouteGVR).Namespace(ns).Create(context.Background(),
		virtualingress.NewRoute(ns, name, spec), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return route
}

// waitRoute waits for the VirtualHTTPRoute's Ready condition, with messageHas in its message.
func waitRoute(t *testing.T, ns, name, status, reason, messageHas string) {
	t.Helper()
	waitCondition(t, "VirtualHTTPRoute "+name, func() (*unstructured.Unstructured, error) {
		return node.Dyn.Resource(virtualingress.RouteGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	}, status, reason, messageHas)
}

// assertParentsFromTraefik: every parent entry of the generated HTTPRoute was written by Traefik.
func assertParentsFromTraefik(t *testing.T, vhr *unstructured.Unstructured) {
	t.Helper()
	list, err := node.Dyn.Resource(virtualingress.HTTPRouteGVR).Namespace(vhr.GetNamespace()).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Items {
		if !strings.HasPrefix(r.GetName(), vhr.GetName()) {
			continue
		}
		parents, _, _ := unstructured.NestedSlice(r.Object, "status", "parents")
		if len(parents) == 0 {
			t.Fatalf("HTTPRoute %s has no status.parents", r.GetName())
		}
		for _, p := range parents {
			if c := p.(map[string]any)["controllerName"]; c != traffic.GatewayController {
				t.Fatalf("HTTPRoute %s: a parent's status written by %v, not Traefik", r.GetName(), c)
			}
		}
		return
	}
	t.Fatalf("no HTTPRoute generated for %s", vhr.GetName())
}

// testQuietIngress: once Traefik has written the generated Ingress's status.loadBalancer, nothing writes the Ingress
// again over a quiet minute: the policies do not fight the controller over status.
func testQuietIngress(t *testing.T, tn tenant) {
	ingresses := node.Kube.NetworkingV1().Ingresses(tn.ns)
	var rv, name string
	poll.Until(t, time.Minute, "the generated Ingress's status.loadBalancer written by Traefik", func() (bool, string, error) {
		list, err := ingresses.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		for _, ing := range list.Items {
			if *ing.Spec.IngressClassName == traffic.Class && strings.HasPrefix(ing.Name, "site") {
				lb := ing.Status.LoadBalancer.Ingress
				name, rv = ing.Name, ing.ResourceVersion
				return len(lb) == 1 && lb[0].IP == devcluster.HostIP, fmt.Sprintf("%s: %v", ing.Name, lb), nil
			}
		}
		return false, "no Ingress yet", nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := ingresses.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var writes []string
	for ev := range w.ResultChan() {
		if ev.Type == watch.Modified || ev.Type == watch.Deleted {
			writes = append(writes, string(ev.Type))
		}
	}
	if len(writes) > 0 {
		t.Fatalf("Ingress %s/%s written %d times in a quiet minute after its status was set: %v", tn.ns, name, len(writes), writes)
	}
	t.Logf("Ingress %s/%s: 0 writes in a quiet minute after Traefik set its status", tn.ns, name)
}
