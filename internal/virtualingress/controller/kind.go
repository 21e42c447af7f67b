package controller

import (
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// sourceKind is one kind the controller checks, with the kind the policies generate from it: a VirtualIngress and its
// Ingress, or a VirtualHTTPRoute and its HTTPRoute. Everything else (resolution, repairs, Kyverno's requests) is the
// same for both.
type sourceKind struct {
	gvk schema.GroupVersionKind
	// statusField is where the resolve policy puts what the generated object must hold: status.<field>.name/spec.
	statusField string
	generated   schema.GroupVersionKind
	// backReferenceLabel names the source on the generated object.
	backReferenceLabel string
	// decode turns a source, watched unstructured, into its typed form and reads it: the one place either kind's
	// fields are converted.
	decode func(obj *unstructured.Unstructured) (*view, error)
	// newGenerated is an empty generated object, of the type the controller reads it as.
	newGenerated func() client.Object
	// gateways is set for routes: the generated object's status.parents, summarised.
	gateways func(generated client.Object) []parent
}

// GVK of VirtualIngress. The controller watches both kinds through one unstructured path, as a VirtualHTTPRoute has no
// type the scheme could decode it into (its spec is Gateway API's HTTPRoute schema, tools/crdgen); decode converts
// each object to its typed form once, and the rest of the controller reads only that.
var GVK = v1alpha1.GroupVersion.WithKind("VirtualIngress")

// RouteGVK of the VirtualHTTPRoute CRD.
var RouteGVK = v1alpha1.GroupVersion.WithKind("VirtualHTTPRoute")

var virtualIngressKind = &sourceKind{
	gvk:                GVK,
	statusField:        "ingress",
	generated:          networkingv1.SchemeGroupVersion.WithKind("Ingress"),
	backReferenceLabel: "virtual-ingress.io/virtualingress",
	decode:             decodeVirtualIngress,
	newGenerated:       func() client.Object { return &networkingv1.Ingress{} },
}

var virtualHTTPRouteKind = &sourceKind{
	gvk:                RouteGVK,
	statusField:        "route",
	generated:          httpRouteGVK,
	backReferenceLabel: "virtual-ingress.io/virtualhttproute",
	decode:             decodeVirtualHTTPRoute,
	newGenerated:       newHTTPRoute,
	gateways:           httpRouteParents,
}

func (k *sourceKind) newSource() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.gvk)
	return u
}

func (k *sourceKind) newSourceList() *unstructured.UnstructuredList {
	u := &unstructured.UnstructuredList{}
	u.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
	return u
}

// read decodes a source the client returned (always unstructured: see GVK).
func (k *sourceKind) read(obj client.Object) (*view, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("%s read as %T, want unstructured", k.gvk.Kind, obj)
	}
	return k.decode(u)
}

// reason is a Ready reason about the generated object, e.g. IngressMissing or HTTPRouteMissing.
func (k *sourceKind) reason(what string) string { return k.generated.Kind + what }

// state reads what the verdict needs of a generated object that should hold want.
func (k *sourceKind) state(generated client.Object, want wantedSpec) (*generatedState, error) {
	g := &generatedState{}
	if owner := metav1.GetControllerOf(generated); owner != nil {
		g.controllerUID, g.controllerKind = owner.UID, owner.Kind
	}
	// A source without status.<field>.spec is Unresolved whatever its generated object holds.
	if want != nil {
		var err error
		if g.holds, err = want.heldBy(generated); err != nil {
			return nil, err
		}
	}
	if k.gateways != nil {
		g.parents = k.gateways(generated)
	}
	return g, nil
}
