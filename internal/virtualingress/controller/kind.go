package controller

import (
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
	// holds tells whether the generated object's spec holds want (status.<field>.spec).
	holds func(generated *unstructured.Unstructured, want map[string]any) (bool, error)
	// gateways is set for routes: the generated object's status.parents, summarised.
	gateways func(generated *unstructured.Unstructured) []parent
}

// GVK of VirtualIngress. The controller reads both kinds through one unstructured path: a VirtualHTTPRoute has no Go
// type (its CRD is Gateway API's HTTPRoute schema, tools/crdgen), and what the two share (status.backends,
// conditions, the generated object's name and spec) is read the same way for both.
var GVK = v1alpha1.GroupVersion.WithKind("VirtualIngress")

// RouteGVK of the VirtualHTTPRoute CRD.
var RouteGVK = v1alpha1.GroupVersion.WithKind("VirtualHTTPRoute")

var virtualIngressKind = &sourceKind{
	gvk:                GVK,
	statusField:        "ingress",
	generated:          networkingv1.SchemeGroupVersion.WithKind("Ingress"),
	backReferenceLabel: "virtual-ingress.io/virtualingress",
	holds:              ingressHolds,
}

// virtualHTTPRouteKind: HTTPRoutes are read unstructured, as this module does not build Gateway API's Go types.
var virtualHTTPRouteKind = &sourceKind{
	gvk:                RouteGVK,
	statusField:        "route",
	generated:          schema.GroupVersionKind{Group: gatewayGroup, Version: "v1", Kind: "HTTPRoute"},
	backReferenceLabel: "virtual-ingress.io/virtualhttproute",
	holds:              routeHolds,
	gateways:           routeParents,
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

func (k *sourceKind) newGenerated() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.generated)
	return u
}

// reason is a Ready reason about the generated object, e.g. IngressMissing or HTTPRouteMissing.
func (k *sourceKind) reason(what string) string { return k.generated.Kind + what }

// ingressHolds compares typed specs, as the API server stores them.
func ingressHolds(generated *unstructured.Unstructured, want map[string]any) (bool, error) {
	var got, wanted networkingv1.IngressSpec
	spec, _, _ := unstructured.NestedFieldNoCopy(generated.Object, "spec")
	if err := convert(spec, &got); err != nil {
		return false, fmt.Errorf("the Ingress's spec: %w", err)
	}
	if err := convert(want, &wanted); err != nil {
		return false, fmt.Errorf("status.ingress.spec: %w", err)
	}
	return equality.Semantic.DeepEqual(&got, &wanted), nil
}

// routeHolds: the HTTPRoute holds every field of want with its value. The API server adds HTTPRoute's defaults (a
// backendRef's kind and weight, a rule's path match, ...) to what Kyverno wrote, so fields want lacks are not
// compared; a list must have want's length, so a backendRef or rule added or removed by hand is a difference.
func routeHolds(generated *unstructured.Unstructured, want map[string]any) (bool, error) {
	spec, _, _ := unstructured.NestedFieldNoCopy(generated.Object, "spec")
	return contains(spec, want), nil
}

func contains(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !contains(g[k], v) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !contains(g[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return fmt.Sprint(got) == fmt.Sprint(want)
	}
}

// state reads what the verdict needs of a generated object.
func (k *sourceKind) state(generated *unstructured.Unstructured, want map[string]any) (*generatedState, error) {
	g := &generatedState{}
	if owner := metav1.GetControllerOf(generated); owner != nil {
		g.controllerUID, g.controllerKind = owner.UID, owner.Kind
	}
	var err error
	if g.holds, err = k.holds(generated, want); err != nil {
		return nil, err
	}
	if k.gateways != nil {
		g.parents = k.gateways(generated)
	}
	return g, nil
}
