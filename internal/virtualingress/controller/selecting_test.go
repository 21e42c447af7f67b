package controller

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// status.backends names a backend by its field path only; its selector (and a backendRef's port name) come from the
// spec at that path, and a backend the spec no longer selects at that path has none.
func TestBackendsOfTakeTheirSelectorFromTheSpec(t *testing.T) {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`
spec:
  defaultBackend: {service: {matchLabels: {app: default}, port: {number: 80}}}
  rules:
  - http:
      paths:
      - backend: {service: {name: fixed, port: {number: 80}}}
      - backend: {service: {matchLabels: {app: web}, port: {name: http}}}
  - backendRefs:
    - {matchLabels: {app: api}, port: grpc}
    - {matchLabels: {app: api2}, port: 9000}
status:
  backends:
  - {field: spec.defaultBackend, service: d, state: Resolved}
  - {field: "spec.rules[0].http.paths[1].backend", service: w, state: Resolved}
  - {field: "spec.rules[1].backendRefs[0]", service: a, state: Resolved, port: 8443}
  - {field: "spec.rules[1].backendRefs[1]", service: b, state: Resolved, port: 9000}
  - {field: "spec.rules[0].http.paths[0].backend", service: gone, state: Stale}
`), &obj.Object); err != nil {
		t.Fatal(err)
	}
	got, err := backendsOf(obj)
	if err != nil {
		t.Fatal(err)
	}
	want := []backend{
		{Field: "spec.defaultBackend", MatchLabels: map[string]string{"app": "default"}, Service: "d", State: "Resolved"},
		{Field: "spec.rules[0].http.paths[1].backend", MatchLabels: map[string]string{"app": "web"}, Service: "w", State: "Resolved"},
		{Field: "spec.rules[1].backendRefs[0]", MatchLabels: map[string]string{"app": "api"}, PortName: "grpc", Service: "a", State: "Resolved", Port: 8443},
		{Field: "spec.rules[1].backendRefs[1]", MatchLabels: map[string]string{"app": "api2"}, Service: "b", State: "Resolved", Port: 9000},
		{Field: "spec.rules[0].http.paths[0].backend", Service: "gone", State: "Stale"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("backendsOf:\n got %+v\nwant %+v", got, want)
	}
	// A backend without a selector is not judged against the Services (an empty selector would match them all).
	if lag, _ := resolutionLag(got[4:], nil, OnMultipleMatchesError); lag != "" {
		t.Errorf("resolutionLag of a backend the spec no longer selects: %q, want none", lag)
	}
}
