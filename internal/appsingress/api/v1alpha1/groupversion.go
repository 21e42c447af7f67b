// Package v1alpha1 is the AppsIngress API (hostedcluster.virtual-ingress.io/v1alpha1): one object per hosted cluster
// asks for a LoadBalancer Service in front of the cluster's router, split-horizon DNS for its *.apps and api names,
// and TLS-passthrough proxy routes to it.
//
// The CRD in charts/apps-ingress-operator/files/crds and zz_generated.deepcopy.go are generated from these types:
// go generate ./internal/appsingress/api/... (make generate).
//
// +kubebuilder:object:generate=true
// +groupName=hostedcluster.virtual-ingress.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

//go:generate go run -modfile=../../../../tools/controller-gen/go.mod sigs.k8s.io/controller-tools/cmd/controller-gen object paths=./... crd:crdVersions=v1 output:crd:artifacts:config=../../../../charts/apps-ingress-operator/files/crds

// GroupVersion is the API group and version of AppsIngress.
var GroupVersion = schema.GroupVersion{Group: "hostedcluster.virtual-ingress.io", Version: "v1alpha1"}

var (
	// SchemeBuilder registers the types of this package.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &AppsIngress{}, &AppsIngressList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
