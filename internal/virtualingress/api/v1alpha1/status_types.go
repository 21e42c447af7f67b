package v1alpha1

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VirtualIngressStatus is written by the virtual-ingress Kyverno policies on every write of the object and on every
// change of a Service in its namespace; values sent by clients are replaced. The status controller writes the Ready
// condition.
type VirtualIngressStatus struct {
	// The Ingress this VirtualIngress renders to. Set once every Service backend has been resolved; after that only
	// ever replaced, never removed, so a Service that disappears cannot delete the Ingress.
	// +optional
	Ingress *GeneratedIngress `json:"ingress,omitempty"`

	// One entry per backend that selects its Service by matchLabels. An entry does not repeat the spec: its selector,
	// host and path are at its field.
	// +optional
	Backends []BackendStatus `json:"backends,omitempty"`

	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []Condition `json:"conditions,omitempty"`

	// The last Service change in this namespace that made the policies re-resolve this object.
	// +optional
	LastServiceEvent string `json:"lastServiceEvent,omitempty"`

	// The last Service change that made the policies re-resolve this object, as written by the service-events
	// policy. The resolve policy reads the namespace's Services from Kyverno's informer unless that informer has not
	// seen this change yet; then it asks the API server.
	// +optional
	ServiceEvent *ServiceEvent `json:"serviceEvent,omitempty"`
}

// GeneratedIngress is the name and spec of the Ingress a VirtualIngress renders to.
type GeneratedIngress struct {
	// +optional
	Name string `json:"name,omitempty"`

	// The Ingress spec with every matchLabels backend replaced by the Service name. Kept as the policies write it
	// (no schema): the clusterPolicy engine's generate rule copies it as it is.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec *networkingv1.IngressSpec `json:"spec,omitempty"`
}

// BackendState is how a matchLabels backend resolved.
//
// +kubebuilder:validation:Enum=Resolved;NoMatch;MultipleMatches;Stale
type BackendState string

// The states of a matchLabels backend.
const (
	// BackendResolved: exactly one Service matches, or the oldest under onMultipleMatches=oldest.
	BackendResolved BackendState = "Resolved"
	// BackendNoMatch: no Service matches (no Ingress for it yet).
	BackendNoMatch BackendState = "NoMatch"
	// BackendMultipleMatches: several Services match (no Ingress for it yet).
	BackendMultipleMatches BackendState = "MultipleMatches"
	// BackendStale: the backend no longer resolves; the Ingress keeps the last resolved name.
	BackendStale BackendState = "Stale"
)

// BackendStatus is the resolution of one backend that selects its Service by matchLabels.
type BackendStatus struct {
	// Path of the backend in spec, e.g. spec.rules[0].http.paths[0].backend.
	// +optional
	Field string `json:"field,omitempty"`

	// The Service name the Ingress uses for this backend (empty while unresolved).
	// +optional
	Service string `json:"service,omitempty"`

	// Resolved (exactly one Service matches, or the oldest under onMultipleMatches=oldest); NoMatch or
	// MultipleMatches (no Ingress for it yet); Stale (no longer resolves, the Ingress keeps the last resolved name).
	// +optional
	State BackendState `json:"state,omitempty"`

	// Names of the matching Services when several match (absent otherwise).
	// +optional
	Candidates []string `json:"candidates,omitempty"`

	// Why the backend is not simply resolved: what matches, and what the Ingress keeps (absent when exactly one
	// Service matches).
	// +optional
	Message string `json:"message,omitempty"`
}

// Condition types: Resolved is the resolve policy's verdict, Ready the status controller's.
const (
	ConditionResolved = "Resolved"
	ConditionReady    = "Ready"
)

// Condition is a condition of a VirtualIngress (VirtualHTTPRoute): Resolved, written by the resolve policy, and Ready,
// written by the status controller. Unlike metav1.Condition only type and status are required: the policies write
// no observedGeneration.
type Condition struct {
	Type string `json:"type"`
	// +kubebuilder:validation:Enum="True";"False";"Unknown"
	Status metav1.ConditionStatus `json:"status"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ServiceOperation is the admission operation of a Service event.
//
// +kubebuilder:validation:Enum=CREATE;UPDATE;DELETE
type ServiceOperation string

// ServiceEvent is a Service change as the service-events policy records it.
type ServiceEvent struct {
	// +optional
	Operation ServiceOperation `json:"operation,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=36
	UID string `json:"uid,omitempty"`
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{1,20}$`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}
