package routes

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/config"
)

func parseConfig(t *testing.T, extra string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte("defaultNamespace: prod\ndeveloperNamespaces: [dev-c, dev-a, dev-b]\n" + extra))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func service(ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{Ports: ports}}
}

func port(name string, number int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: number, Protocol: corev1.ProtocolTCP}
}

// slice is an EndpointSlice of a Service port named portName with one endpoint whose readiness is ready.
func slice(portName string, ready *bool) discoveryv1.EndpointSlice {
	return discoveryv1.EndpointSlice{
		Ports:     []discoveryv1.EndpointPort{{Name: ptr.To(portName), Protocol: ptr.To(corev1.ProtocolTCP)}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}},
	}
}

func readyDev(ns string, svc *corev1.Service) Developer {
	var slices []discoveryv1.EndpointSlice
	for _, p := range svc.Spec.Ports {
		slices = append(slices, slice(p.Name, ptr.To(true)))
	}
	svc.Namespace = ns
	return Developer{Namespace: ns, Service: svc, Slices: slices}
}

func routeNames(routes []map[string]any) []string {
	var names []string
	for _, r := range routes {
		names = append(names, r["name"].(string))
	}
	return names
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSinglePortOrderingAndShape(t *testing.T) {
	prod := service("prod", "web", port("", 80))
	res, err := Compute(Input{Config: parseConfig(t, ""), Service: prod, Developers: []Developer{
		readyDev("dev-c", service("", "web", port("", 80))),
		{Namespace: "dev-a"}, // no Service of that name: no route, not reported
		readyDev("dev-b", service("", "web", port("", 80))),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := routeNames(res.DeveloperRoutes); !reflect.DeepEqual(got, []string{"vso-dev-dev-c", "vso-dev-dev-b"}) {
		t.Fatalf("developer routes %v, want configuration order dev-c, dev-b", got)
	}
	want := `{"match":[{"gateways":["mesh"],"headers":{"x-developer":{"exact":"dev-c"}}}],"name":"vso-dev-dev-c",` +
		`"route":[{"destination":{"host":"web.dev-c.svc.cluster.local","port":{"number":80}}}]}`
	if got := asJSON(t, res.DeveloperRoutes[0]); got != want {
		t.Errorf("route\n got %s\nwant %s", got, want)
	}
	def := `[{"name":"vso-default","route":[{"destination":{"host":"web.prod.svc.cluster.local","port":{"number":80}}}]}]`
	if got := asJSON(t, res.DefaultRoutes); got != def {
		t.Errorf("default routes\n got %s\nwant %s", got, def)
	}
	if len(res.Skipped) != 0 || !reflect.DeepEqual(res.Active, []string{"dev-c", "dev-b"}) {
		t.Errorf("active %v skipped %v", res.Active, res.Skipped)
	}
	http := res.HTTP(nil)
	if last := http[len(http)-1].(map[string]any); last["name"] != "vso-default" {
		t.Errorf("last route %v, want the default route", last["name"])
	}
}

func TestPorts(t *testing.T) {
	prod := service("prod", "api", port("http", 80), port("grpc", 9090), corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
	renamed := readyDev("dev-a", service("", "api", port("http", 8080), port("grpc", 9090)))
	onlyGRPCReady := readyDev("dev-b", service("", "api", port("http", 80), port("grpc", 9090)))
	onlyGRPCReady.Slices[0] = slice("http", ptr.To(false))
	noCompatible := readyDev("dev-c", service("", "api", port("admin", 7000)))
	res, err := Compute(Input{Config: parseConfig(t, "headerName: x-env"), Service: prod, Developers: []Developer{noCompatible, renamed, onlyGRPCReady}})
	if err != nil {
		t.Fatal(err)
	}
	got := routeNames(res.DeveloperRoutes)
	if want := []string{"vso-dev-dev-a-80", "vso-dev-dev-a-9090", "vso-dev-dev-b-9090"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("routes %v, want %v", got, want)
	}
	// Named ports match by name, so production port 80 goes to the developer's 8080; the match names the port.
	want := `{"match":[{"gateways":["mesh"],"headers":{"x-env":{"exact":"dev-a"}},"port":80}],"name":"vso-dev-dev-a-80",` +
		`"route":[{"destination":{"host":"api.dev-a.svc.cluster.local","port":{"number":8080}}}]}`
	if g := asJSON(t, res.DeveloperRoutes[0]); g != want {
		t.Errorf("route\n got %s\nwant %s", g, want)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Namespace != "dev-c" || !strings.Contains(res.Skipped[0].Reason, "no port compatible") {
		t.Errorf("skipped %+v", res.Skipped)
	}
	// Several production ports: the default route is left to Istio's port-preserving behaviour.
	if g := asJSON(t, res.DefaultRoutes); strings.Contains(g, `"port"`) {
		t.Errorf("default route with a port on a multi-port Service: %s", g)
	}
}

func TestReadiness(t *testing.T) {
	prod := service("prod", "web", port("", 80))
	cases := map[string]struct {
		slices []discoveryv1.EndpointSlice
		routed bool
		reason string
	}{
		"no slices":                  {nil, false, "no ready endpoint on port 80"},
		"not ready":                  {[]discoveryv1.EndpointSlice{slice("", ptr.To(false))}, false, "no ready endpoint"},
		"ready condition unset":      {[]discoveryv1.EndpointSlice{slice("", nil)}, true, ""},
		"ready on another port name": {[]discoveryv1.EndpointSlice{slice("metrics", ptr.To(true))}, false, "no ready endpoint"},
		"one of two slices ready":    {[]discoveryv1.EndpointSlice{slice("", ptr.To(false)), slice("", ptr.To(true))}, true, ""},
		"slice without endpoints":    {[]discoveryv1.EndpointSlice{{Ports: slice("", nil).Ports}}, false, "no ready endpoint"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dev := Developer{Namespace: "dev-a", Service: service("dev-a", "web", port("", 80)), Slices: tc.slices}
			res, err := Compute(Input{Config: parseConfig(t, ""), Service: prod, Developers: []Developer{dev}})
			if err != nil {
				t.Fatal(err)
			}
			if routed := len(res.DeveloperRoutes) == 1; routed != tc.routed {
				t.Fatalf("routed %v, want %v (skipped %+v)", routed, tc.routed, res.Skipped)
			}
			if !tc.routed && (len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Reason, tc.reason)) {
				t.Errorf("skipped %+v, want reason %q", res.Skipped, tc.reason)
			}
		})
	}
}

func TestExclusionsAndUnreadable(t *testing.T) {
	prod := service("prod", "web", port("", 80))
	cfg := parseConfig(t, "")
	res, err := Compute(Input{Config: cfg, Service: prod, Developers: []Developer{
		readyDev("kube-system", service("", "web", port("", 80))), // excluded, even if a caller passes it
		readyDev("prod", service("", "web", port("", 80))),        // the production Service itself
		{Namespace: "dev-b", Unreadable: "services is forbidden"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DeveloperRoutes) != 0 {
		t.Errorf("routes %v", routeNames(res.DeveloperRoutes))
	}
	active, skipped := res.Status()
	if active != "" || skipped != "dev-b: namespace not readable: services is forbidden" {
		t.Errorf("status %q %q", active, skipped)
	}
}

func TestExternalNameAndNoPorts(t *testing.T) {
	ext := service("", "web", port("", 80))
	ext.Spec.Type = corev1.ServiceTypeExternalName
	res, _ := Compute(Input{Config: parseConfig(t, ""), Service: service("prod", "web", port("", 80)), Developers: []Developer{readyDev("dev-a", ext)}})
	if len(res.DeveloperRoutes) != 0 || !strings.Contains(res.Skipped[0].Reason, "ExternalName") {
		t.Errorf("ExternalName: %+v", res.Skipped)
	}
	res, _ = Compute(Input{Config: parseConfig(t, ""), Service: service("prod", "web"), Developers: []Developer{readyDev("dev-a", service("", "web", port("", 80)))}})
	if len(res.DeveloperRoutes) != 0 || !strings.Contains(res.Skipped[0].Reason, "no TCP port") {
		t.Errorf("portless production Service: %+v", res.Skipped)
	}
	if got := asJSON(t, res.DefaultRoutes); strings.Contains(got, "port") {
		t.Errorf("default route of a portless Service has a port: %s", got)
	}
}

func TestTemplateRendering(t *testing.T) {
	cfg := parseConfig(t, `virtualServiceTemplate: |
  apiVersion: networking.istio.io/v1
  kind: VirtualService
  metadata:
    name: ${serviceName}-routes
    labels: {app: "${serviceName}"}
  spec:
    hosts: [${serviceName}]
    http:
    - route:
      - destination: {host: ${serviceName}.${defaultNamespace}.svc.cluster.local, port: {number: 8443}}
    - route:
      - destination: {host: ${serviceName}}
`)
	res, err := Compute(Input{Config: cfg, Service: service("prod", "cart", port("", 80))})
	if err != nil {
		t.Fatal(err)
	}
	if res.Template.Name != "cart-routes" || res.Template.Labels["app"] != "cart" || res.Template.Hosts[0] != "cart" {
		t.Errorf("template %+v", res.Template)
	}
	// A port in the template wins; a short host naming the Service gets the Service's single port.
	want := `[{"name":"vso-default-0","route":[{"destination":{"host":"cart.prod.svc.cluster.local","port":{"number":8443}}}]},` +
		`{"name":"vso-default-1","route":[{"destination":{"host":"cart","port":{"number":80}}}]}]`
	if got := asJSON(t, res.DefaultRoutes); got != want {
		t.Errorf("default routes\n got %s\nwant %s", got, want)
	}
}

func TestMergeKeepsForeignRoutes(t *testing.T) {
	res, err := Compute(Input{Config: parseConfig(t, ""), Service: service("prod", "web", port("", 80)), Developers: []Developer{
		readyDev("dev-a", service("", "web", port("", 80))),
	}})
	if err != nil {
		t.Fatal(err)
	}
	live := []any{
		map[string]any{"name": "vso-dev-dev-gone"}, // the operator's, from an older state: dropped
		map[string]any{"name": "canary", "match": []any{map[string]any{"uri": map[string]any{"prefix": "/beta"}}}},
		map[string]any{"name": "vso-default"},
		map[string]any{"match": []any{}}, // unnamed: someone else's
	}
	var names []any
	for _, r := range res.HTTP(live) {
		names = append(names, r.(map[string]any)["name"])
	}
	if want := []any{"vso-dev-dev-a", "canary", nil, "vso-default"}; !reflect.DeepEqual(names, want) {
		t.Errorf("merged %v, want %v", names, want)
	}
}

// TestDeveloperRouteScope: by default a developer route matches only traffic inside the mesh; opened to a gateway and
// narrowed to source namespaces and labels, each source namespace is one alternative match.
func TestDeveloperRouteScope(t *testing.T) {
	dev := []Developer{readyDev("dev-a", service("", "web", port("", 80)))}
	res, err := Compute(Input{Config: parseConfig(t, "developerRoutes:\n  gateways: [mesh, istio-system/public]\n  sourceNamespaces: [frontend, e2e]\n  sourceLabels: {app: tester}\n"),
		Service: service("prod", "web", port("", 80)), Developers: dev})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"gateways":["mesh","istio-system/public"],"headers":{"x-developer":{"exact":"dev-a"}},"sourceLabels":{"app":"tester"},"sourceNamespace":"frontend"},` +
		`{"gateways":["mesh","istio-system/public"],"headers":{"x-developer":{"exact":"dev-a"}},"sourceLabels":{"app":"tester"},"sourceNamespace":"e2e"}]`
	if got := asJSON(t, res.DeveloperRoutes[0]["match"]); got != want {
		t.Errorf("match\n got %s\nwant %s", got, want)
	}
	// An explicit empty list opens the developer routes to every gateway the VirtualService is bound to.
	res, err = Compute(Input{Config: parseConfig(t, "developerRoutes: {gateways: []}\n"), Service: service("prod", "web", port("", 80)), Developers: dev})
	if err != nil {
		t.Fatal(err)
	}
	if got := asJSON(t, res.DeveloperRoutes[0]["match"]); got != `[{"headers":{"x-developer":{"exact":"dev-a"}}}]` {
		t.Errorf("open match %s", got)
	}
}
