package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// selector is what the spec says of a backend that selects its Service by labels.
type selector struct {
	MatchLabels map[string]string
	// PortName is the port name a VirtualHTTPRoute's backendRef asks for ("" for a number).
	PortName string
}

// selectingBackends finds every backend of obj's spec that selects its Service by labels, keyed by the field path the
// resolve policies name it by in status.backends (status does not repeat the spec).
func selectingBackends(obj *unstructured.Unstructured) map[string]selector {
	out := map[string]selector{}
	if labels, ok, _ := unstructured.NestedStringMap(obj.Object, "spec", "defaultBackend", "service", "matchLabels"); ok {
		out["spec.defaultBackend"] = selector{MatchLabels: labels}
	}
	rules, _, _ := unstructured.NestedSlice(obj.Object, "spec", "rules")
	for i, r := range rules {
		rule, _ := r.(map[string]any)
		paths, _, _ := unstructured.NestedSlice(rule, "http", "paths")
		for j, p := range paths {
			path, _ := p.(map[string]any)
			if labels, ok, _ := unstructured.NestedStringMap(path, "backend", "service", "matchLabels"); ok {
				out[fmt.Sprintf("spec.rules[%d].http.paths[%d].backend", i, j)] = selector{MatchLabels: labels}
			}
		}
		refs, _, _ := unstructured.NestedSlice(rule, "backendRefs")
		for j, b := range refs {
			ref, _ := b.(map[string]any)
			if labels, ok, _ := unstructured.NestedStringMap(ref, "matchLabels"); ok {
				portName, _ := ref["port"].(string)
				out[fmt.Sprintf("spec.rules[%d].backendRefs[%d]", i, j)] = selector{MatchLabels: labels, PortName: portName}
			}
		}
	}
	return out
}
