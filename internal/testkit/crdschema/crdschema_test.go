package crdschema

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const crdPath = "../../../charts/virtual-ingress/files/crds/virtual-ingress.io_virtualingresses.yaml"

func loadValidator(t *testing.T) *Validator { return loadValidatorFile(t, crdPath) }

func loadValidatorFile(t *testing.T, path string) *Validator {
	t.Helper()
	v, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// coder returns the canonical example, parsed from the fixture users read in the README.
func coder(t *testing.T) *unstructured.Unstructured {
	return readObject(t, "../../../fixtures/examples/virtualingresses.yaml")
}

// readObject parses a one-document YAML file.
func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
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
			tc.mutate(serviceOf(obj.Object), obj.Object)
			assertRejected(t, v, obj, tc.want)
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

// TestRejectsWhatTheIngressAPIRejects: input the Ingress API refuses must be refused when the VirtualIngress is
// written, with the field named, not later when Kyverno writes the Ingress while the VirtualIngress says Ready.
func TestRejectsWhatTheIngressAPIRejects(t *testing.T) {
	const path0 = "spec.rules[0].http.paths[0]"
	type obj = map[string]any
	cases := []struct {
		name   string
		mutate func(obj)
		want   []string
	}{
		{"host *", func(o obj) { firstRule(o)["host"] = "*" }, []string{"spec.rules[0].host", "a host must be a DNS name"}},
		{"host with spaces and braces", func(o obj) { firstRule(o)["host"] = "a b;{}" }, []string{"spec.rules[0].host", "a host must be a DNS name"}},
		{"host an IP address", func(o obj) { firstRule(o)["host"] = "10.0.0.1" }, []string{"spec.rules[0].host", "no IP address"}},
		{"host upper case", func(o obj) { firstRule(o)["host"] = "Coder.example.com" }, []string{"spec.rules[0].host", "a host must be a DNS name"}},
		{"host wildcard not leftmost", func(o obj) { firstRule(o)["host"] = "a.*.example.com" }, []string{"spec.rules[0].host", "a host must be a DNS name"}},
		{"tls host with a port", func(o obj) { firstTLS(o)["hosts"] = []any{"coder.example.com:443"} }, []string{"spec.tls[0].hosts[0]", "a host must be a DNS name"}},
		{"relative path", func(o obj) { firstPath(o)["path"] = "abc" }, []string{path0 + ".path", "path must be an absolute path"}},
		{"Prefix path without path", func(o obj) { delete(firstPath(o), "path") }, []string{path0 + ".path", "path must be an absolute path"}},
		{"Prefix path with //", func(o obj) { firstPath(o)["path"] = "/a//b" }, []string{path0 + ".path", "must not contain '//'"}},
		{"Exact path ending in /..", func(o obj) {
			firstPath(o)["pathType"], firstPath(o)["path"] = "Exact", "/a/.."
		}, []string{path0 + ".path", "must not contain '//'"}},
		{"ImplementationSpecific relative path", func(o obj) {
			firstPath(o)["pathType"], firstPath(o)["path"] = "ImplementationSpecific", "abc"
		}, []string{path0 + ".path", "path must be an absolute path"}},
		{"ingressClassName with spaces", func(o obj) { o["spec"].(obj)["ingressClassName"] = "Other Class!" }, []string{"spec.ingressClassName", "must be the name of an IngressClass"}},
		{"port name with symbols", func(o obj) { serviceOf(o)["port"] = obj{"name": "AB_;{}"} }, []string{path0 + ".backend.service.port.name", "IANA_SVC_NAME"}},
		{"port name of digits only", func(o obj) { serviceOf(o)["port"] = obj{"name": "8080"} }, []string{path0 + ".backend.service.port.name", "IANA_SVC_NAME"}},
		{"secretName in another namespace", func(o obj) { firstTLS(o)["secretName"] = "other-ns/secret" }, []string{"spec.tls[0].secretName", "no namespace prefix"}},
		{"path with a Kyverno variable", func(o obj) { firstPath(o)["path"] = "/{{ request.userInfo.username }}" }, []string{path0 + ".path", "path must not contain '{{'"}},
		{"resource backend name with braces", func(o obj) {
			firstPath(o)["backend"] = obj{"resource": obj{"kind": "Bucket", "name": "{{ x }}"}}
		}, []string{path0 + ".backend.resource.name", "should match"}},
	}
	v := loadValidator(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := coder(t)
			tc.mutate(obj.Object)
			assertRejected(t, v, obj, tc.want)
		})
	}
}

// firstRule, firstPath and firstTLS are parts of the coder example: its first rule, that rule's first path, and its
// first tls entry; serviceOf is the Service backend of that path, whose port a case replaces.
func firstRule(o map[string]any) map[string]any {
	return o["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)
}

func firstPath(o map[string]any) map[string]any {
	return firstRule(o)["http"].(map[string]any)["paths"].([]any)[0].(map[string]any)
}

func firstTLS(o map[string]any) map[string]any {
	return o["spec"].(map[string]any)["tls"].([]any)[0].(map[string]any)
}

func serviceOf(o map[string]any) map[string]any {
	return firstPath(o)["backend"].(map[string]any)["service"].(map[string]any)
}

func TestAcceptsWhatTheIngressAPIAccepts(t *testing.T) {
	obj := coder(t)
	rule := firstRule(obj.Object)
	rule["host"] = "*.coder.example.com"
	paths := rule["http"].(map[string]any)["paths"].([]any)
	paths[0].(map[string]any)["path"] = "/api/v1.2/items"
	paths = append(paths, map[string]any{
		"pathType": "ImplementationSpecific",
		"backend": map[string]any{"service": map[string]any{
			"name": "web", "port": map[string]any{"name": "http-alt2"},
		}},
	})
	rule["http"].(map[string]any)["paths"] = paths
	if errs := loadValidator(t).Validate(context.Background(), obj); len(errs) > 0 {
		t.Fatalf("rejected:\n%s", Summary(errs))
	}
}

// TestCapsLabelSelectedBackends: 32 matchLabels backends are accepted, the 33rd is refused; named backends do not
// count.
func TestCapsLabelSelectedBackends(t *testing.T) {
	withBackends := func(selected, named int) *unstructured.Unstructured {
		obj := coder(t)
		rule := firstRule(obj.Object)
		template := rule["http"].(map[string]any)["paths"].([]any)[0].(map[string]any)
		var paths []any
		for i := range selected + named {
			p := map[string]any{"pathType": "Prefix", "path": fmt.Sprintf("/p%d", i)}
			if i < selected {
				p["backend"] = template["backend"]
			} else {
				p["backend"] = map[string]any{"service": map[string]any{"name": "web", "port": map[string]any{"number": int64(80)}}}
			}
			paths = append(paths, p)
		}
		rule["http"].(map[string]any)["paths"] = paths
		return obj
	}
	v := loadValidator(t)
	if errs := v.Validate(context.Background(), withBackends(32, 20)); len(errs) > 0 {
		t.Fatalf("32 selected + 20 named backends rejected:\n%s", Summary(errs))
	}
	assertRejected(t, v, withBackends(33, 0), []string{"spec", "at most 32 backends may select their Service by matchLabels"})
}

func assertRejected(t *testing.T, v *Validator, obj *unstructured.Unstructured, want []string) {
	t.Helper()
	errs := v.Validate(context.Background(), obj)
	if len(errs) == 0 {
		t.Fatal("accepted, want rejection")
	}
	summary := Summary(errs)
	for _, line := range strings.Split(summary, "\n") {
		if containsAll(line, want) {
			return
		}
	}
	t.Fatalf("no error names %q; got:\n%s", want, summary)
}
