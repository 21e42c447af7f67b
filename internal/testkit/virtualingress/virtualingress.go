// Package virtualingress builds VirtualIngress objects and reads their status, for the end-to-end tests, the
// benchmark and the demo. The API itself is defined by the CRD in charts/virtual-ingress/crds.
package virtualingress

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GVR is the resource of the VirtualIngress CRD.
var GVR = schema.GroupVersionResource{Group: "virtual-ingress.io", Version: "v1alpha1", Resource: "virtualingresses"}

// New returns a VirtualIngress with the given spec.
func New(namespace, name string, spec map[string]any) *unstructured.Unstructured {
	return newObject("VirtualIngress", namespace, name, spec)
}

// newObject is a virtual-ingress.io/v1alpha1 object of kind with the given spec.
func newObject(kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "virtual-ingress.io/v1alpha1",
		"kind":       kind,
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec":       spec,
	}}
}

// SelectorBackend is a backend choosing its Service by labels.
func SelectorBackend(labels map[string]string, port int64) map[string]any {
	ml := map[string]any{}
	for k, v := range labels {
		ml[k] = v
	}
	return map[string]any{"service": map[string]any{"matchLabels": ml, "port": map[string]any{"number": port}}}
}

// NamedBackend is a backend naming its Service.
func NamedBackend(name string, port int64) map[string]any {
	return map[string]any{"service": map[string]any{"name": name, "port": map[string]any{"number": port}}}
}

// Path is a Prefix path to backend.
func Path(p string, backend map[string]any) map[string]any {
	return map[string]any{"path": p, "pathType": "Prefix", "backend": backend}
}

// Rule is a host rule with paths.
func Rule(host string, paths ...map[string]any) map[string]any {
	items := make([]any, len(paths))
	for i, p := range paths {
		items[i] = p
	}
	return map[string]any{"host": host, "http": map[string]any{"paths": items}}
}

// CoderSpec is the spec of the project's canonical example (fixtures/examples/virtualingresses.yaml), selecting
// its Service with labels.
func CoderSpec(labels map[string]string) map[string]any {
	return coderSpec(SelectorBackend(labels, 80))
}

// CoderIngressSpec is the spec of the Ingress the canonical example resolves to, once its Service is service.
func CoderIngressSpec(service string) map[string]any {
	return coderSpec(NamedBackend(service, 80))
}

func coderSpec(backend map[string]any) map[string]any {
	return map[string]any{
		"ingressClassName": "tenant-root",
		"tls": []any{
			map[string]any{"hosts": []any{"coder.enigma.vgijssel.nl"}, "secretName": "coder-tls"},
			map[string]any{"hosts": []any{"*.coder.enigma.vgijssel.nl"}, "secretName": "coder-wildcard-tls"},
		},
		"rules": []any{Rule("coder.enigma.vgijssel.nl", Path("/", backend))},
	}
}

// Condition returns status, reason and message of the condition of that type ("" when there is none): Resolved (the
// resolve policy's) or Ready (the status controller's).
func Condition(obj *unstructured.Unstructured, conditionType string) (status, reason, message string) {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == conditionType {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["reason"]), fmt.Sprint(m["message"])
		}
	}
	return "", "", ""
}

// Backends returns status.backends keyed by field (e.g. spec.rules[0].http.paths[0].backend).
func Backends(vi *unstructured.Unstructured) map[string]map[string]any {
	out := map[string]map[string]any{}
	backends, _, _ := unstructured.NestedSlice(vi.Object, "status", "backends")
	for _, b := range backends {
		m, _ := b.(map[string]any)
		out[fmt.Sprint(m["field"])] = m
	}
	return out
}
