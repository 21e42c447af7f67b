package controller

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// A Service finds a VirtualIngress through one of its own labels (a selector is indexed under its first pair) or its
// name (a backend that names it); concerns then checks the whole selector.
func TestServiceKeysFindEverySelectingOrUsingVirtualIngress(t *testing.T) {
	vi := &v1alpha1.VirtualIngress{
		Spec: v1alpha1.VirtualIngressSpec{DefaultBackend: &v1alpha1.Backend{Service: &v1alpha1.ServiceBackend{
			MatchLabels: map[string]v1alpha1.LabelValue{"b": "2", "a": "1"},
		}}},
		Status: v1alpha1.VirtualIngressStatus{Backends: []v1alpha1.BackendStatus{
			{Field: "spec.defaultBackend", Service: "old", State: v1alpha1.BackendStale},
		}},
	}
	backends := virtualIngressView(vi).backends
	keys := keysOf(backends)
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
		if got := found && concerns(backends, svc); got != tc.want {
			t.Errorf("%s: concerned %v, want %v", tc.name, got, tc.want)
		}
	}
}
