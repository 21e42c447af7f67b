package controller

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// status.backends names a backend by its field path only; its selector comes from the spec at that path, and a
// backend the spec no longer selects at that path has none.
func TestVirtualIngressBackendsTakeTheirSelectorFromTheSpec(t *testing.T) {
	vi := &v1alpha1.VirtualIngress{}
	if err := yaml.Unmarshal([]byte(`
spec:
  defaultBackend: {service: {matchLabels: {app: default}, port: {number: 80}}}
  rules:
  - http:
      paths:
      - backend: {service: {name: fixed, port: {number: 80}}}
      - backend: {service: {matchLabels: {app: web}, port: {name: http}}}
status:
  backends:
  - {field: spec.defaultBackend, service: d, state: Resolved}
  - {field: "spec.rules[0].http.paths[1].backend", service: w, state: Resolved}
  - {field: "spec.rules[0].http.paths[0].backend", service: gone, state: Stale}
`), vi); err != nil {
		t.Fatal(err)
	}
	got := virtualIngressView(vi).backends
	want := []backend{
		{BackendStatus: v1alpha1.BackendStatus{Field: "spec.defaultBackend", Service: "d", State: "Resolved"},
			selector: selector{MatchLabels: map[string]string{"app": "default"}}},
		{BackendStatus: v1alpha1.BackendStatus{Field: "spec.rules[0].http.paths[1].backend", Service: "w", State: "Resolved"},
			selector: selector{MatchLabels: map[string]string{"app": "web"}}},
		{BackendStatus: v1alpha1.BackendStatus{Field: "spec.rules[0].http.paths[0].backend", Service: "gone", State: "Stale"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("backends:\n got %+v\nwant %+v", got, want)
	}
	// A backend without a selector is not judged against the Services (an empty selector would match them all).
	if lag, _ := resolutionLag(got[2:], nil, OnMultipleMatchesError); lag != "" {
		t.Errorf("resolutionLag of a backend the spec no longer selects: %q, want none", lag)
	}
}

// A VirtualHTTPRoute, read as the controller reads it (unstructured, then decoded): a backendRef's selector and the
// port name it asks for come from the spec, the port number it resolved to from status, and status.route.spec keeps
// its integers.
func TestVirtualHTTPRouteBackendsTakeTheirSelectorAndPortNameFromTheSpec(t *testing.T) {
	obj := &unstructured.Unstructured{}
	data, err := yaml.YAMLToJSON([]byte(`
apiVersion: virtual-ingress.io/v1alpha1
kind: VirtualHTTPRoute
spec:
  rules:
  - backendRefs:
    - {matchLabels: {app: api}, port: grpc}
    - {matchLabels: {app: api2}, port: 9000}
    - {name: fixed, port: 80}
status:
  route:
    name: shop-generated
    spec:
      parentRefs: [{name: gw}]
      rules: [{backendRefs: [{name: svc-a, port: 8443}]}]
  backends:
  - {field: "spec.rules[0].backendRefs[0]", service: a, state: Resolved, port: 8443}
  - {field: "spec.rules[0].backendRefs[1]", service: b, state: Resolved, port: 9000}
  - {field: "spec.rules[0].backendRefs[2]", service: gone, state: Stale, port: 80}
`))
	if err != nil {
		t.Fatal(err)
	}
	// As the client decodes it: integers as int64.
	if err := obj.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	v, err := virtualHTTPRouteKind.decode(obj)
	if err != nil {
		t.Fatal(err)
	}
	want := []backend{
		{BackendStatus: v1alpha1.BackendStatus{Field: "spec.rules[0].backendRefs[0]", Service: "a", State: "Resolved"}, Port: 8443,
			selector: selector{MatchLabels: map[string]string{"app": "api"}, PortName: "grpc"}},
		{BackendStatus: v1alpha1.BackendStatus{Field: "spec.rules[0].backendRefs[1]", Service: "b", State: "Resolved"}, Port: 9000,
			selector: selector{MatchLabels: map[string]string{"app": "api2"}}},
		{BackendStatus: v1alpha1.BackendStatus{Field: "spec.rules[0].backendRefs[2]", Service: "gone", State: "Stale"}, Port: 80},
	}
	if !reflect.DeepEqual(v.backends, want) {
		t.Fatalf("backends:\n got %+v\nwant %+v", v.backends, want)
	}
	if v.generatedName != "shop-generated" || v.want == nil {
		t.Fatalf("status.route read as %q %v", v.generatedName, v.want)
	}
	if holds, err := v.want.heldBy(storedRoute("x", "svc-a")); err != nil || !holds {
		t.Errorf("the HTTPRoute as stored does not hold status.route.spec: %v %v", holds, err)
	}
	// An integer read as a float would print as 1e+06 and differ from the HTTPRoute's.
	spec := v.want.(wantedRoute)
	if port := spec["rules"].([]any)[0].(map[string]any)["backendRefs"].([]any)[0].(map[string]any)["port"]; port != int64(8443) {
		t.Errorf("status.route.spec port read as %T %v, want int64", port, port)
	}
}
