package crdschema

import (
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const crdPath = "../../charts/virtual-ingress/crds/virtualingresses.virtual-ingress.io.yaml"

func loadValidator(t *testing.T) *Validator {
	t.Helper()
	v, err := LoadFile(crdPath)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// coder returns the canonical example, parsed from the fixture users read in the README.
func coder(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("../../fixtures/examples/virtualingresses.yaml")
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestDefinitionIsAcceptedByTheAPIServerChecks(t *testing.T) {
	if errs := loadValidator(t).ValidateDefinition(context.Background()); len(errs) > 0 {
		t.Fatalf("the API server would reject the CRD:\n%s", Summary(errs))
	}
}

func TestCanonicalExampleIsValid(t *testing.T) {
	if errs := loadValidator(t).Validate(context.Background(), coder(t)); len(errs) > 0 {
		t.Fatalf("coder example rejected:\n%s", Summary(errs))
	}
}

func TestRejectsBadBackends(t *testing.T) {
	const backend = "spec.rules[0].http.paths[0].backend"
	cases := []struct {
		name   string
		mutate func(service map[string]any, obj map[string]any)
		// want are substrings that must all appear in one error line: the field and the reason.
		want []string
	}{
		{
			name:   "name and matchLabels",
			mutate: func(s, _ map[string]any) { s["name"] = "relay" },
			want:   []string{backend + ".service", "exactly one of name or matchLabels must be set"},
		},
		{
			name:   "neither name nor matchLabels",
			mutate: func(s, _ map[string]any) { delete(s, "matchLabels") },
			want:   []string{backend + ".service", "exactly one of name or matchLabels must be set"},
		},
		{
			name:   "empty matchLabels",
			mutate: func(s, _ map[string]any) { s["matchLabels"] = map[string]any{} },
			want:   []string{backend + ".service.matchLabels", "matchLabels must not be empty"},
		},
		{
			name: "invalid label key",
			mutate: func(s, _ map[string]any) {
				s["matchLabels"] = map[string]any{"not a key!": "x"}
			},
			want: []string{backend + ".service.matchLabels", "matchLabels keys must be valid label keys"},
		},
		{
			name: "label name part longer than 63",
			mutate: func(s, _ map[string]any) {
				s["matchLabels"] = map[string]any{"example.com/" + strings.Repeat("a", 64): "x"}
			},
			want: []string{backend + ".service.matchLabels", "matchLabels keys must be valid label keys"},
		},
		{
			name: "invalid label value",
			mutate: func(s, _ map[string]any) {
				s["matchLabels"] = map[string]any{"app": "-starts-with-dash"}
			},
			want: []string{backend + ".service.matchLabels.app", "should match"},
		},
		{
			name:   "missing port",
			mutate: func(s, _ map[string]any) { delete(s, "port") },
			want:   []string{backend + ".service.port", "Required value"},
		},
		{
			name: "port with name and number",
			mutate: func(s, _ map[string]any) {
				s["port"] = map[string]any{"name": "http", "number": int64(80)}
			},
			want: []string{backend + ".service.port", "exactly one of port.name or port.number must be set"},
		},
		{
			name: "misspelt field (strict field validation)",
			mutate: func(s, _ map[string]any) {
				s["matchLabel"] = s["matchLabels"]
				delete(s, "matchLabels")
			},
			want: []string{backend + ".service.matchLabel", "unknown field"},
		},
		{
			name: "defaultBackend validated like path backends",
			mutate: func(_, obj map[string]any) {
				spec := obj["spec"].(map[string]any)
				spec["defaultBackend"] = map[string]any{"service": map[string]any{
					"name": "a", "matchLabels": map[string]any{"a": "b"}, "port": map[string]any{"number": int64(80)},
				}}
			},
			want: []string{"spec.defaultBackend.service", "exactly one of name or matchLabels must be set"},
		},
		{
			name: "name too long for the back-reference label",
			mutate: func(_, obj map[string]any) {
				obj["metadata"].(map[string]any)["name"] = strings.Repeat("a", 64)
			},
			want: []string{"metadata.name must be at most 63 characters"},
		},
	}
	v := loadValidator(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := coder(t)
			rules := obj.Object["spec"].(map[string]any)["rules"].([]any)
			svc := rules[0].(map[string]any)["http"].(map[string]any)["paths"].([]any)[0].(map[string]any)["backend"].(map[string]any)["service"].(map[string]any)
			tc.mutate(svc, obj.Object)

			errs := v.Validate(context.Background(), obj)
			if len(errs) == 0 {
				t.Fatal("accepted, want rejection")
			}
			summary := Summary(errs)
			for _, line := range strings.Split(summary, "\n") {
				if containsAll(line, tc.want) {
					return
				}
			}
			t.Fatalf("no error names %q; got:\n%s", tc.want, summary)
		})
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
