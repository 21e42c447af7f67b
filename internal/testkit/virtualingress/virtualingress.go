// Package virtualingress builds VirtualIngress objects and reads their status, for the end-to-end tests, the
// benchmark and the demo, from the API's Go types (internal/virtualingress/api/v1alpha1).
package virtualingress

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// GVR is the resource of the VirtualIngress CRD.
var GVR = v1alpha1.GroupVersion.WithResource("virtualingresses")

// New returns a VirtualIngress with the given spec.
func New(namespace, name string, spec map[string]any) *unstructured.Unstructured {
	return newObject("VirtualIngress", namespace, name, spec)
}

// newObject is a virtual-ingress.io/v1alpha1 object of kind with the given spec.
func newObject(kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       kind,
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec":       spec,
	}}
}

// SelectorBackend is a backend choosing its Service by labels.
func SelectorBackend(labels map[string]string, port int32) map[string]any {
	matchLabels := map[string]v1alpha1.LabelValue{}
	for k, v := range labels {
		matchLabels[k] = v1alpha1.LabelValue(v)
	}
	return toMap(&v1alpha1.Backend{Service: &v1alpha1.ServiceBackend{MatchLabels: matchLabels, Port: v1alpha1.ServiceBackendPort{Number: port}}})
}

// NamedBackend is a backend naming its Service.
func NamedBackend(name string, port int32) map[string]any {
	return toMap(&v1alpha1.Backend{Service: &v1alpha1.ServiceBackend{Name: name, Port: v1alpha1.ServiceBackendPort{Number: port}}})
}

// Path is a Prefix path to backend. The backend is a map, so that a test can also write one the API refuses.
func Path(p string, backend map[string]any) map[string]any {
	path := toMap(&v1alpha1.Path{Path: p, PathType: "Prefix"})
	path["backend"] = backend
	return path
}

// Rule is a host rule with paths.
func Rule(host string, paths ...map[string]any) map[string]any {
	items := make([]any, len(paths))
	for i, p := range paths {
		items[i] = p
	}
	rule := toMap(&v1alpha1.Rule{Host: v1alpha1.Host(host)})
	rule["http"] = map[string]any{"paths": items}
	return rule
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
	spec := toMap(&v1alpha1.VirtualIngressSpec{
		IngressClassName: ptr.To("tenant-root"),
		TLS: []v1alpha1.TLS{
			{Hosts: []v1alpha1.Host{"coder.enigma.vgijssel.nl"}, SecretName: "coder-tls"},
			{Hosts: []v1alpha1.Host{"*.coder.enigma.vgijssel.nl"}, SecretName: "coder-wildcard-tls"},
		},
	})
	spec["rules"] = []any{Rule("coder.enigma.vgijssel.nl", Path("/", backend))}
	return spec
}

// toMap is a typed part of a VirtualIngress (a pointer to it) as the dynamic client sends it. The builders start from the API's types
// and hand out maps, so that a test can change them, or write what the API refuses.
func toMap(v any) map[string]any {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		panic(fmt.Sprintf("virtualingress: %T does not convert: %v", v, err))
	}
	return m
}

// Condition returns status, reason and message of the condition of that type ("" when there is none): Resolved (the
// resolve policy's) or Ready (the status controller's). A VirtualHTTPRoute's conditions are the same.
func Condition(obj *unstructured.Unstructured, conditionType string) (status, reason, message string) {
	for _, c := range statusOf(obj).Conditions {
		if c.Type == conditionType {
			return string(c.Status), c.Reason, c.Message
		}
	}
	return "", "", ""
}

// Backends returns status.backends keyed by field (e.g. spec.rules[0].http.paths[0].backend).
func Backends(vi *unstructured.Unstructured) map[string]v1alpha1.BackendStatus {
	out := map[string]v1alpha1.BackendStatus{}
	for _, b := range statusOf(vi).Backends {
		out[b.Field] = b
	}
	return out
}

// statusOf reads the status the policies and the status controller wrote; what does not decode reads as empty, so
// that the caller's assertion on it fails.
func statusOf(obj *unstructured.Unstructured) v1alpha1.VirtualIngressStatus {
	var status v1alpha1.VirtualIngressStatus
	if raw, ok, _ := unstructured.NestedMap(obj.Object, "status"); ok {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &status)
	}
	return status
}
