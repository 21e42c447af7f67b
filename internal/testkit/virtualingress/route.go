package virtualingress

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// RouteGVR is the resource of the VirtualHTTPRoute CRD.
var RouteGVR = v1alpha1.GroupVersion.WithResource("virtualhttproutes")

// HTTPRouteGVR is Gateway API's HTTPRoute, what a VirtualHTTPRoute generates.
var HTTPRouteGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}

// NewRoute returns a VirtualHTTPRoute with the given spec.
func NewRoute(namespace, name string, spec map[string]any) *unstructured.Unstructured {
	return newObject("VirtualHTTPRoute", namespace, name, spec)
}

// SelectorBackendRef is a backendRef choosing its Service by labels; port is a number (int64) or a port name.
func SelectorBackendRef(labels map[string]string, port any) map[string]any {
	ml := map[string]any{}
	for k, v := range labels {
		ml[k] = v
	}
	return map[string]any{"matchLabels": ml, "port": port}
}

// CoderRouteSpec is the canonical VirtualHTTPRoute's spec (fixtures/examples/virtualhttproutes.yaml) selecting
// labels, with its Service port by name: one Gateway, one hostname, one rule.
func CoderRouteSpec(labels map[string]string) map[string]any {
	return map[string]any{
		"parentRefs": []any{map[string]any{"name": "tenant-root"}},
		"hostnames":  []any{"coder.enigma.vgijssel.nl"},
		"rules": []any{map[string]any{
			"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}},
			"backendRefs": []any{SelectorBackendRef(labels, "http")},
		}},
	}
}
