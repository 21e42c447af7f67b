package controller

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// Condition types, as the API names them: Resolved is the resolve policy's, Ready this controller's.
const (
	ConditionResolved = v1alpha1.ConditionResolved
	ConditionReady    = v1alpha1.ConditionReady
)

// backend is one entry of status.backends, as the resolve policies write it, with what the spec says at its field:
// MatchLabels, and for a VirtualHTTPRoute's backendRef PortName, the port name it asks for. Port is the number a
// backendRef resolved to. Candidates are the matching Services, listed only when there are several.
type backend struct {
	Field       string            `json:"field"`
	MatchLabels map[string]string `json:"-"`
	Service     string            `json:"service"`
	State       string            `json:"state"`
	PortName    string            `json:"-"`
	Port        int32             `json:"port,omitempty"`
	Candidates  []string          `json:"candidates,omitempty"`
}

// view is what the controller reads from a VirtualIngress or VirtualHTTPRoute.
type view struct {
	obj *unstructured.Unstructured
	// generatedName and generatedSpec are status.<field>.name and .spec: what the generated object must hold.
	generatedName string
	generatedSpec map[string]any
	backends      []backend
	conditions    []metav1.Condition
	// parents is status.parents as last written (routes).
	parents []parent
}

func newView(obj *unstructured.Unstructured, kind *sourceKind) (*view, error) {
	v := &view{obj: obj}
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	var err error
	if v.backends, err = backendsOf(obj); err != nil {
		return nil, err
	}
	if err := convert(status["conditions"], &v.conditions); err != nil {
		return nil, fmt.Errorf("status.conditions: %w", err)
	}
	if err := convert(status["parents"], &v.parents); err != nil {
		return nil, fmt.Errorf("status.parents: %w", err)
	}
	v.generatedName, _, _ = unstructured.NestedString(status, kind.statusField, "name")
	if spec, ok, _ := unstructured.NestedMap(status, kind.statusField, "spec"); ok && len(spec) > 0 {
		v.generatedSpec = spec
	}
	return v, nil
}

// backendsOf reads status.backends alone, each with its selector from the spec: the Service watch asks it of every
// object of a namespace.
func backendsOf(obj *unstructured.Unstructured) ([]backend, error) {
	var backends []backend
	raw, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "backends")
	if err := convert(raw, &backends); err != nil {
		return nil, fmt.Errorf("status.backends: %w", err)
	}
	if len(backends) == 0 {
		return nil, nil
	}
	selecting := selectingBackends(obj)
	for i := range backends {
		s := selecting[backends[i].Field]
		backends[i].MatchLabels, backends[i].PortName = s.MatchLabels, s.PortName
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
