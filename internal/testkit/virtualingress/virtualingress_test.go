package virtualingress

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// The builders describe the canonical example that users read in fixtures/examples, through the API's types: both
// must decode to the same VirtualIngressSpec, and the built object must carry nothing the API does not know.
func TestCoderSpecIsTheCanonicalExample(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "fixtures", "examples", "virtualingresses.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var fixture v1alpha1.VirtualIngress
	if err := yaml.UnmarshalStrict([]byte(strings.Split(string(data), "\n---\n")[0]), &fixture); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{}
	for k, v := range fixture.Spec.Rules[0].HTTP.Paths[0].Backend.Service.MatchLabels {
		labels[k] = string(v)
	}
	built := New("tenant-root", "coder", CoderSpec(labels))
	data, err = yaml.Marshal(built.Object)
	if err != nil {
		t.Fatal(err)
	}
	var got v1alpha1.VirtualIngress
	if err := yaml.UnmarshalStrict(data, &got); err != nil {
		t.Fatalf("the built object has fields the API does not know: %v", err)
	}
	if !reflect.DeepEqual(got.Spec, fixture.Spec) {
		t.Fatalf("CoderSpec builds\n%+v\nthe fixture says\n%+v", got.Spec, fixture.Spec)
	}
}

// Status is read through the API's types: what the policies write decodes, and a condition or backend that is not
// there reads as empty.
func TestStatusReaders(t *testing.T) {
	vi := New("ns", "coder", CoderSpec(map[string]string{"app": "coder"}))
	vi.Object["status"] = map[string]any{
		"backends": []any{map[string]any{
			"field": "spec.rules[0].http.paths[0].backend", "service": "relay", "state": "Resolved",
		}},
		"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "IngressMissing", "message": "m"}},
	}
	if s, r, m := Condition(vi, "Ready"); s != "False" || r != "IngressMissing" || m != "m" {
		t.Errorf("Ready reads %q %q %q", s, r, m)
	}
	if s, _, _ := Condition(vi, "Resolved"); s != "" {
		t.Errorf("a missing condition reads %q", s)
	}
	b := Backends(vi)["spec.rules[0].http.paths[0].backend"]
	if b.Service != "relay" || b.State != v1alpha1.BackendResolved {
		t.Errorf("backend reads %+v", b)
	}
}
