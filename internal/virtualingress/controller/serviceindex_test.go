package controller

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A Service finds a VirtualIngress through one of its own labels (a selector is indexed under its first pair) or its
// name (a backend that names it); concerns then checks the whole selector.
func TestServiceKeysFindEverySelectingOrUsingVirtualIngress(t *testing.T) {
	vi := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"defaultBackend": map[string]any{"service": map[string]any{"matchLabels": map[string]any{"b": "2", "a": "1"}}}},
		"status": map[string]any{"backends": []any{
			map[string]any{"field": "spec.defaultBackend", "service": "old", "state": "Stale"},
		}},
	}}
	keys := serviceKeys(vi)
	if want := []string{serviceKey("old"), labelKey("a", "1")}; !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"selected", map[string]string{"a": "1", "b": "2", "c": "3"}, true},
		{"one pair only", map[string]string{"a": "1"}, false},
		{"named in status", map[string]string{"x": "y"}, true},
	} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Labels: tc.labels}}
		if tc.name == "named in status" {
			svc.Name = "old"
		}
		found := slices.Contains(keys, serviceKey(svc.Name))
		for k, v := range svc.Labels {
			found = found || slices.Contains(keys, labelKey(k, v))
		}
		if got := found && concerns(vi, svc); got != tc.want {
			t.Errorf("%s: concerned %v, want %v", tc.name, got, tc.want)
		}
	}
}
