package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AppsIngress makes a hosted cluster's *.apps.<cluster>.<baseDomain> and api.<cluster>.<baseDomain> reachable: a
// LoadBalancer Service in the hosted cluster (its external IP assigned by a user-managed MetalLB), DNS records with
// one answer for clients on the cluster's VLANs and another for the pod network, and TLS-passthrough proxy routes.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=appsing,categories=virtual-ingress
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.hostedClusterRef.name`
// +kubebuilder:printcolumn:name="Domain",type=string,JSONPath=`.spec.baseDomain`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`
// +kubebuilder:printcolumn:name="External-IPs",type=string,JSONPath=`.status.externalIPs`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AppsIngress struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AppsIngressSpec   `json:"spec"`
	Status AppsIngressStatus `json:"status,omitempty"`
}

// AppsIngressSpec is what the user asks for.
type AppsIngressSpec struct {
	// hostedClusterRef names the HyperShift HostedCluster (hypershift.openshift.io/v1beta1) whose
	// status.kubeconfig Secret gives access to the hosted cluster. Immutable: the Service it created would be
	// left behind in the old cluster.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.hostedClusterRef is immutable: create another AppsIngress for another hosted cluster"
	HostedClusterRef HostedClusterRef `json:"hostedClusterRef"`

	// clusterName is <cluster> in *.apps.<cluster>.<baseDomain>. Default: the HostedCluster's name.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="spec.clusterName must be a DNS label: lower-case letters, digits and '-', starting and ending with a letter or digit"
	ClusterName string `json:"clusterName,omitempty"`

	// baseDomain is the DNS domain under which <cluster> lives, such as example.com.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\\\\.)*[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$')",message="spec.baseDomain must be a lower-case DNS name such as example.com (no wildcard, no trailing dot)"
	BaseDomain string `json:"baseDomain"`

	// service is the LoadBalancer Service created in the hosted cluster in front of its router pods.
	// +optional
	// +kubebuilder:default={}
	Service ServiceSpec `json:"service,omitempty"`

	// metallb names what the hosted cluster's (user-managed) MetalLB should use. The operator never installs or
	// configures MetalLB; it annotates the Service and checks that MetalLB's CRDs are there.
	// +optional
	// +kubebuilder:default={}
	MetalLB MetalLBSpec `json:"metallb,omitempty"`

	// dns configures the split-horizon records.
	// +optional
	DNS DNSSpec `json:"dns,omitempty"`

	// suspend stops reconciling: nothing is changed in the hosted cluster and the DNS and proxy entries keep their
	// last state until it is unset.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// HostedClusterRef names a HostedCluster.
type HostedClusterRef struct {
	// name of the HostedCluster.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// namespace of the HostedCluster. Default: the AppsIngress's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// ServiceSpec is the hosted cluster's LoadBalancer Service.
// +kubebuilder:validation:XValidation:rule="(has(self.name) == has(oldSelf.name)) && (!has(self.name) || self.name == oldSelf.name)",message="spec.service.name is immutable"
// +kubebuilder:validation:XValidation:rule="(has(self.__namespace__) == has(oldSelf.__namespace__)) && (!has(self.__namespace__) || self.__namespace__ == oldSelf.__namespace__)",message="spec.service.namespace is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.loadBalancerClass) == has(oldSelf.loadBalancerClass) && (!has(self.loadBalancerClass) || self.loadBalancerClass == oldSelf.loadBalancerClass)",message="spec.service.loadBalancerClass is immutable (Kubernetes cannot change a Service's class): delete the AppsIngress and create it again"
type ServiceSpec struct {
	// name of the Service. Default: <cluster>-apps.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="spec.service.name must be a DNS label starting with a letter"
	Name string `json:"name,omitempty"`
	// namespace of the Service: the router pods' namespace, as a Service selects pods of its own namespace only.
	// +optional
	// +kubebuilder:default=openshift-ingress
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="spec.service.namespace must be a namespace name (DNS label)"
	Namespace string `json:"namespace,omitempty"`
	// selector of the router pods. Default: ingresscontroller.operator.openshift.io/deployment-ingresscontroller: default.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 63)",message="spec.service.selector values must be at most 63 characters"
	Selector map[string]string `json:"selector,omitempty"`
	// ports of the Service, which are also the ports the proxy forwards to at the external IP.
	// +optional
	// +kubebuilder:default={}
	Ports ServicePorts `json:"ports,omitempty"`
	// ipFamilyPolicy of the Service: PreferDualStack or RequireDualStack give A and AAAA records when the hosted
	// cluster and its MetalLB pool are dual-stack. Default: the hosted cluster's (SingleStack).
	// +optional
	// +kubebuilder:validation:Enum=SingleStack;PreferDualStack;RequireDualStack
	IPFamilyPolicy *corev1.IPFamilyPolicy `json:"ipFamilyPolicy,omitempty"`
	// loadBalancerClass of the Service: which load-balancer implementation of the hosted cluster must serve it. A
	// hosted cluster on KubeVirt also runs KubeVirt's cloud controller manager, which serves every LoadBalancer
	// Service without a class; run MetalLB with a class (its --lb-class flag, the loadBalancerClass value of its
	// chart) and name that class here, so that MetalLB, and only MetalLB, assigns the VLAN address. Unset: the
	// cluster's default implementation. Immutable, as a Service's class is.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="spec.service.loadBalancerClass must be a qualified name such as metallb.io/vlan"
	LoadBalancerClass *string `json:"loadBalancerClass,omitempty"`
	// allocateLoadBalancerNodePorts of the Service. MetalLB announces the Service's own address and needs no node
	// ports: false saves two of the hosted cluster's node ports per Service (its range holds 2,768). Default: the
	// hosted cluster's (true).
	// +optional
	AllocateLoadBalancerNodePorts *bool `json:"allocateLoadBalancerNodePorts,omitempty"`
}

// ServicePorts are the Service's port numbers.
// +kubebuilder:validation:XValidation:rule="!has(self.http) || !has(self.https) || self.http != self.https",message="spec.service.ports.http and spec.service.ports.https must differ"
type ServicePorts struct {
	// http is the plain HTTP port (Host-header routing). Default 80.
	// +optional
	// +kubebuilder:default=80
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	HTTP int32 `json:"http,omitempty"`
	// https is the TLS port (SNI passthrough). Default 443.
	// +optional
	// +kubebuilder:default=443
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	HTTPS int32 `json:"https,omitempty"`
}

// MetalLBSpec names the user-managed MetalLB's objects.
type MetalLBSpec struct {
	// addressPoolName is the IPAddressPool to allocate from, set as the Service annotation annotationKey.
	// Unset: MetalLB chooses (a pool with autoAssign).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	AddressPoolName string `json:"addressPoolName,omitempty"`
	// annotationKey is the Service annotation naming the pool. metallb.universe.tf/address-pool is the key of
	// MetalLB before 0.14.9.
	// +optional
	// +kubebuilder:default="metallb.io/address-pool"
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="spec.metallb.annotationKey must be an annotation key such as metallb.io/address-pool"
	AnnotationKey string `json:"annotationKey,omitempty"`
	// ipAddressPoolRanges are the addresses the pool is expected to hand out (CIDRs or first-last ranges). Only
	// checked: an external IP outside them sets the ExternalIPAssigned condition's reason to OutsidePoolRanges.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=100
	// +kubebuilder:validation:XValidation:rule="self.all(r, isCIDR(r) || (r.split('-').size() == 2 && isIP(r.split('-')[0].trim()) && isIP(r.split('-')[1].trim())))",message="spec.metallb.ipAddressPoolRanges entries must be CIDRs (192.0.2.0/24) or ranges (192.0.2.10-192.0.2.20)"
	IPAddressPoolRanges []string `json:"ipAddressPoolRanges,omitempty"`
	// l2AdvertisementName, when set, must name an L2Advertisement of the hosted cluster (checked, never created).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	L2AdvertisementName string `json:"l2AdvertisementName,omitempty"`
}

// DNSSpec configures the split-horizon records.
type DNSSpec struct {
	// vlanCIDRs are the client networks that get the VLAN view: *.apps names answer with the external IP(s).
	// Every other client (the pod network) gets the proxy's address for *.apps and api.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="spec.dns.vlanCIDRs entries must be CIDRs such as 192.0.2.0/24"
	VLANCIDRs []string `json:"vlanCIDRs,omitempty"`
}

// Phase is the one-word state of an AppsIngress.
// +kubebuilder:validation:Enum=Pending;Ready;Degraded
type Phase string

// Phases.
const (
	PhasePending  Phase = "Pending"
	PhaseReady    Phase = "Ready"
	PhaseDegraded Phase = "Degraded"
)

// AppsIngressStatus is what the operator observed.
type AppsIngressStatus struct {
	// phase: Pending (waiting for something that should come), Ready, or Degraded (something is wrong; the
	// last good DNS and proxy entries are kept).
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// reason is a CamelCase word for why the phase is what it is.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message explains reason to a human.
	// +optional
	Message string `json:"message,omitempty"`
	// externalIPs are the Service's load-balancer IPs the DNS and proxy entries point at (the last good ones
	// while Degraded).
	// +optional
	ExternalIPs []string `json:"externalIPs,omitempty"`
	// apiEndpoint is host:port of the hosted cluster's API server, the proxy's target for api.<cluster>.<baseDomain>.
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`
	// apiBackend is host:port the proxy connects to for the API when it is not apiEndpoint: the control plane's
	// Service in the hosted control plane namespace, reached without the published name.
	// +optional
	APIBackend string `json:"apiBackend,omitempty"`
	// lastSyncTime is when the operator last wrote this status after a reconcile: whenever anything else in it
	// changes, and at least every 10 minutes while nothing does (a periodic re-check that finds nothing new writes
	// nothing). Much older than that, the operator is not reconciling this object.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: HostedClusterReachable, ServiceReady, ExternalIPAssigned, DNSConfigured, ProxyConfigured, Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AppsIngressList is a list of AppsIngress.
//
// +kubebuilder:object:root=true
type AppsIngressList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AppsIngress `json:"items"`
}
