package controller

import (
	"encoding/json"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GVK of the VirtualIngress CRD. The controller reads it unstructured: the chart's CRD is the schema's source of truth.
var GVK = schema.GroupVersionKind{Group: "virtual-ingress.io", Version: "v1alpha1", Kind: "VirtualIngress"}

// Condition types: Resolved is the resolve policy's, Ready this controller's.
const (
	ConditionResolved = "Resolved"
	ConditionReady    = "Ready"
)

// backend is one entry of status.backends, as the resolve policy writes it.
type backend struct {
	Field       string            `json:"field"`
	MatchLabels map[string]string `json:"matchLabels"`
	Service     string            `json:"service"`
	State       string            `json:"state"`
}

// view is what the controller reads from a VirtualIngress.
type view struct {
	obj         *unstructured.Unstructured
	ingressName string
	ingressSpec *networkingv1.IngressSpec
	backends    []backend
	conditions  []metav1.Condition
}

func newView(obj *unstructured.Unstructured) (*view, error) {
	v := &view{obj: obj}
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	var err error
	if v.backends, err = backendsOf(obj); err != nil {
		return nil, err
	}
	if err := convert(status["conditions"], &v.conditions); err != nil {
		return nil, fmt.Errorf("status.conditions: %w", err)
	}
	v.ingressName, _, _ = unstructured.NestedString(status, "ingress", "name")
	if spec, ok, _ := unstructured.NestedMap(status, "ingress", "spec"); ok && len(spec) > 0 {
		v.ingressSpec = &networkingv1.IngressSpec{}
		if err := convert(spec, v.ingressSpec); err != nil {
			return nil, fmt.Errorf("status.ingress.spec: %w", err)
		}
	}
	return v, nil
}

// backendsOf reads status.backends alone: the Service watch asks it of every VirtualIngress of a namespace.
func backendsOf(obj *unstructured.Unstructured) ([]backend, error) {
	var backends []backend
	raw, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "backends")
	if err := convert(raw, &backends); err != nil {
		return nil, fmt.Errorf("status.backends: %w", err)
	}
	return backends, nil
}

func (v *view) condition(conditionType string) *metav1.Condition {
	for i := range v.conditions {
		if v.conditions[i].Type == conditionType {
			return &v.conditions[i]
		}
	}
	return nil
}

// convert copies a decoded JSON value into a typed one (nil leaves out untouched).
func convert(in, out any) error {
	if in == nil {
		return nil
	}
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
