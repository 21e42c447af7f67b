package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VirtualIngress is an Ingress whose backends may select their Service by labels. Kyverno policies installed by the
// virtual-ingress chart resolve the labels to the Service's current name and keep a standard Ingress (named after the
// VirtualIngress) in sync.
//
// status is a plain field, not the status subresource: the Kyverno policies write it while admitting every write of
// the object, so whatever a client sends there is recomputed before it is stored.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=vi,categories=all
// +kubebuilder:metadata:labels="app.kubernetes.io/name=virtual-ingress";"app.kubernetes.io/part-of=virtual-ingress"
// +kubebuilder:printcolumn:name="Ingress",type=string,JSONPath=`.status.ingress.name`,description="The generated Ingress"
// +kubebuilder:printcolumn:name="Resolved",type=string,JSONPath=`.status.conditions[?(@.type=="Resolved")].status`,description="Every matchLabels backend selects a Service (the resolve policy's verdict)"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,description="The Ingress exists, is this VirtualIngress's and holds status.ingress (the status controller's verdict)"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name must be at most 63 characters: it labels the generated Ingress (virtual-ingress.io/virtualingress)"
type VirtualIngress struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VirtualIngressSpec `json:"spec"`
	// +optional
	Status VirtualIngressStatus `json:"status,omitempty"`
}

// VirtualIngressList is a list of VirtualIngresses.
//
// +kubebuilder:object:root=true
type VirtualIngressList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualIngress `json:"items"`
}

// VirtualIngressSpec is a networking.k8s.io/v1 IngressSpec, except that a Service backend may use matchLabels.
//
// Every label-selected backend costs a comparison with every Service of the namespace on each write and each Service
// event. With 32, the CEL engine stays inside Kyverno's per-evaluation cost limit up to 1,500 Services in the
// namespace (measured offline; 1,750 exceed it), and one VirtualIngress cannot occupy Kyverno's CPU (1,024 backends
// over 300 Services took 85 s under the clusterPolicy engine).
//
// +kubebuilder:validation:XValidation:rule="has(self.defaultBackend) || (has(self.rules) && size(self.rules) > 0)",message="either defaultBackend or rules must be specified"
// +kubebuilder:validation:XValidation:rule=`(has(self.defaultBackend) && has(self.defaultBackend.service) && has(self.defaultBackend.service.matchLabels) ? 1 : 0) + (has(self.rules) ? self.rules.map(r, has(r.http) ? r.http.paths.filter(p, has(p.backend.service) && has(p.backend.service.matchLabels)).size() : 0).sum() : 0) <= 32`,message="at most 32 backends may select their Service by matchLabels; split the VirtualIngress"
type VirtualIngressSpec struct {
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$')`,message="ingressClassName must be the name of an IngressClass (a DNS-1123 subdomain)"
	IngressClassName *string `json:"ingressClassName,omitempty"`

	// +optional
	DefaultBackend *Backend `json:"defaultBackend,omitempty"`

	// 32 x 64 hosts keeps the host rule inside the API server's CEL cost budget.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	TLS []TLS `json:"tls,omitempty"`

	// +optional
	// +kubebuilder:validation:MaxItems=64
	Rules []Rule `json:"rules,omitempty"`
}

// Backend is where traffic goes: a Service (by name, or chosen by labels) or a typed object reference. Exactly one of
// service or resource.
//
// +kubebuilder:validation:XValidation:rule="has(self.service) != has(self.resource)",message="exactly one of service or resource must be set"
type Backend struct {
	// +optional
	Service *ServiceBackend `json:"service,omitempty"`
	// +optional
	Resource *TypedLocalObjectReference `json:"resource,omitempty"`
}

// ServiceBackend is a Service in the VirtualIngress's namespace, named directly (name) or found by labels
// (matchLabels).
//
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.matchLabels)",message="exactly one of name or matchLabels must be set"
type ServiceBackend struct {
	// Name of the Service; copied to the Ingress untouched.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name,omitempty"`

	// Labels the Service must carry (all of them, like a label selector's matchLabels). The generated Ingress names the Service that matches.
	// +optional
	// +mapType=atomic
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="size(self) > 0",message="matchLabels must not be empty"
	// +kubebuilder:validation:XValidation:rule=`self.all(k, size(k) <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))`,message="matchLabels keys must be valid label keys: an optional DNS subdomain prefix and '/', then a name of at most 63 characters (alphanumerics, '-', '_', '.'), starting and ending with an alphanumeric"
	MatchLabels map[string]LabelValue `json:"matchLabels,omitempty"`

	// Port of the Service, by number or by name.
	Port ServiceBackendPort `json:"port"`
}

// LabelValue is the value of a label.
//
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
type LabelValue string

// ServiceBackendPort is the port of a Service, by number or by name.
//
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.number)",message="exactly one of port.name or port.number must be set"
type ServiceBackendPort struct {
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && self.matches('[a-z]') && !self.contains('--')`,message="port.name must be a Service port name (IANA_SVC_NAME): lower-case alphanumerics and '-', at least one letter, no '--', not starting or ending with '-'"
	Name string `json:"name,omitempty"`

	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Number int32 `json:"number,omitempty"`
}

// TypedLocalObjectReference is a reference to another object in the same namespace (copied to the Ingress untouched).
type TypedLocalObjectReference struct {
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	APIGroup *string `json:"apiGroup,omitempty"`

	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9]*$`
	Kind string `json:"kind"`

	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// Host is a DNS name, optionally with a leading '*.' wildcard label.
//
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:XValidation:rule=`self.matches('^(\\*\\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$') && !self.matches('^[0-9]+(\\.[0-9]+){3}$')`,message="a host must be a DNS name, optionally with a leading '*.' wildcard label (lower case, no IP address, no port)"
type Host string

// TLS is the TLS configuration of some hosts.
type TLS struct {
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Hosts []Host `json:"hosts,omitempty"`

	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$')`,message="secretName must be the name of a Secret in the VirtualIngress's namespace (a DNS-1123 subdomain, no namespace prefix)"
	SecretName string `json:"secretName,omitempty"`
}

// Rule maps the paths of a host to backends.
type Rule struct {
	// +optional
	Host Host `json:"host,omitempty"`
	// +optional
	HTTP *HTTPRuleValue `json:"http,omitempty"`
}

// HTTPRuleValue holds the paths of a rule.
type HTTPRuleValue struct {
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Paths []Path `json:"paths"`
}

// PathType is how a path matches.
//
// +kubebuilder:validation:Enum=Exact;Prefix;ImplementationSpecific
type PathType string

// Path routes the requests whose path matches to a backend. Paths are validated as the Ingress API validates them:
// absolute, and for Exact and Prefix no segment that proxies would normalise into a different path. The
// clusterPolicy engine's Kyverno would evaluate "{{ ... }}" in what it copies, hence the last rule.
//
// +kubebuilder:validation:XValidation:rule=`self.pathType == 'ImplementationSpecific' ? (!has(self.path) || self.path == "" || self.path.startsWith('/')) : (has(self.path) && self.path.startsWith('/'))`,message="path must be an absolute path (start with '/')",fieldPath=".path"
// +kubebuilder:validation:XValidation:rule=`self.pathType == 'ImplementationSpecific' || !has(self.path) || !(['//', '/./', '/../', '%2f', '%2F'].exists(seq, self.path.contains(seq)) || self.path.endsWith('/..') || self.path.endsWith('/.'))`,message="an Exact or Prefix path must not contain '//', '/./', '/../' or '%2f', nor end in '/.' or '/..'",fieldPath=".path"
// +kubebuilder:validation:XValidation:rule=`!has(self.path) || !self.path.contains('{{')`,message="path must not contain '{{'",fieldPath=".path"
type Path struct {
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Path     string   `json:"path,omitempty"`
	PathType PathType `json:"pathType"`
	Backend  Backend  `json:"backend"`
}
