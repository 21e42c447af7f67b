package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// Condition types, as the API names them: Resolved is the resolve policy's, Ready this controller's.
const (
	ConditionResolved = v1alpha1.ConditionResolved
	ConditionReady    = v1alpha1.ConditionReady
)

// backend is one entry of status.backends with what the spec says at its field (status does not repeat the spec).
type backend struct {
	v1alpha1.BackendStatus
	// Port is the number a VirtualHTTPRoute's backendRef resolved to; a VirtualIngress's entries have none.
	Port int32
	selector
}

// wantedSpec is status.<field>.spec of a source: what its generated object must hold.
type wantedSpec interface {
	heldBy(generated client.Object) (bool, error)
}

// view is what the controller reads from a VirtualIngress or VirtualHTTPRoute, taken from its typed form.
type view struct {
	// meta is the source's metadata.
	meta metav1.Object
	// generatedName is status.<field>.name: the generated object to check.
	generatedName string
	// want is status.<field>.spec; nil when status has none (or an empty one).
	want       wantedSpec
	backends   []backend
	conditions []v1alpha1.Condition
	// parents is status.parents as last written (routes).
	parents []parent
}

func (v *view) condition(conditionType string) *v1alpha1.Condition {
	for i := range v.conditions {
		if v.conditions[i].Type == conditionType {
			return &v.conditions[i]
		}
	}
	return nil
}

// withSelectors joins each status.backends entry with the selector the spec has at its field; an entry whose field no
// longer selects in the spec gets none.
func withSelectors(statuses []backend, selecting map[string]selector) []backend {
	for i := range statuses {
		statuses[i].selector = selecting[statuses[i].Field]
	}
	return statuses
}
