package crdschema

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const routeCRDPath = "../../../charts/virtual-ingress/files/crds/virtualhttproutes.virtual-ingress.io.yaml"

func loadRouteValidator(t *testing.T) *Validator { return loadValidatorFile(t, routeCRDPath) }

// coderRoute is the canonical VirtualHTTPRoute users read in the README.
func coderRoute(t *testing.T) *unstructured.Unstructured {
	return readObject(t, "../../../fixtures/examples/virtualhttproutes.yaml")
}

// backendRef is rules[rule].backendRefs[0] of obj.
func backendRef(obj map[string]any, rule int) map[string]any {
	rules := obj["spec"].(map[string]any)["rules"].([]any)
	return rules[rule].(map[string]any)["backendRefs"].([]any)[0].(map[string]any)
}

func TestRouteDefinitionIsAcceptedByTheAPIServerChecks(t *testing.T) {
	if errs := loadRouteValidator(t).ValidateDefinition(context.Background()); len(errs) > 0 {
		t.Fatalf("the API server would reject the CRD:\n%s", Summary(errs))
	}
}

func TestCanonicalRouteIsValid(t *testing.T) {
	if errs := loadRouteValidator(t).Validate(context.Background(), coderRoute(t)); len(errs) > 0 {
		t.Fatalf("coder route rejected:\n%s", Summary(errs))
	}
}

func TestRejectsBadBackendRefs(t *testing.T) {
	const selecting, named = "spec.rules[0].backendRefs[0]", "spec.rules[1].backendRefs[0]"
	cases := []struct {
		name   string
		mutate func(obj map[string]any)
		want   []string
	}{{
		name:   "name and matchLabels",
		mutate: func(o map[string]any) { backendRef(o, 0)["name"] = "relay" },
		want:   []string{selecting, "exactly one of name or matchLabels must be set"},
	}, {
		name:   "neither name nor matchLabels",
		mutate: func(o map[string]any) { delete(backendRef(o, 0), "matchLabels") },
		want:   []string{selecting, "exactly one of name or matchLabels must be set"},
	}, {
		name:   "matchLabels in another namespace",
		mutate: func(o map[string]any) { backendRef(o, 0)["namespace"] = "other" },
		want:   []string{selecting, "matchLabels selects a Service of the VirtualHTTPRoute's own namespace"},
	}, {
		name:   "matchLabels on another kind",
		mutate: func(o map[string]any) { backendRef(o, 0)["kind"] = "ServiceImport" },
		want:   []string{selecting, "group must be empty, kind Service"},
	}, {
		name:   "named port on a named backend",
		mutate: func(o map[string]any) { backendRef(o, 1)["port"] = "http" },
		want:   []string{named, "port may be a name only with matchLabels"},
	}, {
		name:   "port out of range",
		mutate: func(o map[string]any) { backendRef(o, 1)["port"] = int64(70000) },
		want:   []string{named + ".port", "port must be between 1 and 65535"},
	}, {
		name:   "port name that is no Service port name",
		mutate: func(o map[string]any) { backendRef(o, 0)["port"] = "AB_;{}" },
		want:   []string{selecting + ".port", "a named port must be a Service port name"},
	}, {
		name:   "Service without port (HTTPRoute's own rule)",
		mutate: func(o map[string]any) { delete(backendRef(o, 1), "port") },
		want:   []string{named, "Must have port for Service reference"},
	}, {
		name:   "empty matchLabels",
		mutate: func(o map[string]any) { backendRef(o, 0)["matchLabels"] = map[string]any{} },
		want:   []string{selecting + ".matchLabels", "matchLabels must not be empty"},
	}, {
		name:   "misspelt field (strict field validation)",
		mutate: func(o map[string]any) { backendRef(o, 0)["matchLabel"] = map[string]any{"a": "b"} },
		want:   []string{selecting + ".matchLabel", "unknown field"},
	}, {
		name: "hostname that is no DNS name (HTTPRoute's own pattern)",
		mutate: func(o map[string]any) {
			o["spec"].(map[string]any)["hostnames"] = []any{"a b;{}"}
		},
		want: []string{"spec.hostnames[0]", "should match"},
	}, {
		name: "relative path (HTTPRoute's own rule)",
		mutate: func(o map[string]any) {
			rule := o["spec"].(map[string]any)["rules"].([]any)[1].(map[string]any)
			rule["matches"].([]any)[0].(map[string]any)["path"].(map[string]any)["value"] = "healthz"
		},
		want: []string{"spec.rules[1].matches[0].path", "must be an absolute path"},
	}, {
		name: "name too long for the back-reference label",
		mutate: func(o map[string]any) {
			o["metadata"].(map[string]any)["name"] = strings.Repeat("a", 64)
		},
		want: []string{"metadata.name must be at most 63 characters"},
	}}
	v := loadRouteValidator(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := coderRoute(t)
			tc.mutate(obj.Object)
			assertRejected(t, v, obj, tc.want)
		})
	}
}

// TestRouteDefaultsAsHTTPRoute: an omitted kind is Service and weight 1, as on an HTTPRoute, so a matchLabels
// backendRef needs neither.
func TestRouteDefaultsAsHTTPRoute(t *testing.T) {
	obj := coderRoute(t)
	ref := backendRef(obj.Object, 0)
	if _, ok := ref["kind"]; ok {
		t.Fatal("the fixture should leave kind to its default")
	}
	ref["weight"] = int64(0)
	if errs := loadRouteValidator(t).Validate(context.Background(), obj); len(errs) > 0 {
		t.Fatalf("rejected:\n%s", Summary(errs))
	}
}

// TestCapsLabelSelectedBackendRefs: 32 matchLabels backendRefs are accepted, the 33rd is refused; named backendRefs
// do not count.
func TestCapsLabelSelectedBackendRefs(t *testing.T) {
	v := loadRouteValidator(t)
	build := func(selecting int) *unstructured.Unstructured {
		obj := coderRoute(t)
		var rules []any
		for len(rules)*16 < selecting+16 {
			var refs []any
			for i := 0; i < 16; i++ {
				ref := map[string]any{"name": "named", "port": int64(80)}
				if len(rules)*16+i < selecting {
					ref = map[string]any{"matchLabels": map[string]any{"app": "a"}, "port": "http"}
				}
				refs = append(refs, ref)
			}
			rules = append(rules, map[string]any{"backendRefs": refs})
		}
		obj.Object["spec"].(map[string]any)["rules"] = rules
		return obj
	}
	if errs := v.Validate(context.Background(), build(32)); len(errs) > 0 {
		t.Fatalf("32 selecting backendRefs rejected:\n%s", Summary(errs))
	}
	assertRejected(t, v, build(33), []string{"spec", "at most 32 backendRefs may select their Service by matchLabels"})
}
