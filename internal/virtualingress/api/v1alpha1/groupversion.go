// Package v1alpha1 is the VirtualIngress API (virtual-ingress.io/v1alpha1): an Ingress whose backends may select
// their Service by labels, resolved and kept as a standard Ingress by the virtual-ingress chart's Kyverno policies.
//
// The VirtualIngress CRD in charts/virtual-ingress/files/crds (which the chart's templates/crds.yaml renders) and
// zz_generated.deepcopy.go are generated from these types: go generate ./internal/virtualingress/api/...
// (make generate). The policies write status (both engines, in
// charts/virtual-ingress/files) and the status controller its Ready condition; these types are the contract they
// share with the CRD.
//
// +kubebuilder:object:generate=true
// +groupName=virtual-ingress.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

//go:generate go run -modfile=../../../../tools/controller-gen/go.mod sigs.k8s.io/controller-tools/cmd/controller-gen object paths=./... crd:crdVersions=v1 output:crd:artifacts:config=../../../../charts/virtual-ingress/files/crds

// GroupVersion is the API group and version of VirtualIngress (and of VirtualHTTPRoute, whose CRD tools/crdgen
// writes).
var GroupVersion = schema.GroupVersion{Group: "virtual-ingress.io", Version: "v1alpha1"}

var (
	// SchemeBuilder registers the types of this package.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &VirtualIngress{}, &VirtualIngressList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
