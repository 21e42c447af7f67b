package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// gatewayGroup is Gateway API's group: its HTTPRoutes, and a parentRef's default group.
const gatewayGroup = "gateway.networking.k8s.io"

var httpRouteGVK = schema.GroupVersionKind{Group: gatewayGroup, Version: "v1", Kind: "HTTPRoute"}

// newHTTPRoute is an empty generated HTTPRoute. HTTPRoutes are read unstructured: the shipped binary does not import
// Gateway API's Go types.
func newHTTPRoute() client.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(httpRouteGVK)
	return u
}

// httpRouteParents is routeParents of a generated HTTPRoute as the client returns it.
func httpRouteParents(generated client.Object) []parent {
	route, ok := generated.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	return routeParents(route)
}

// wantedRoute is status.route.spec. The HTTPRoute holds every field of it with its value: the API server adds
// HTTPRoute's defaults (a backendRef's kind and weight, a rule's path match, ...) to what Kyverno wrote, so fields it
// lacks are not compared; a list must have its length, so a backendRef or rule added or removed by hand is a
// difference.
type wantedRoute map[string]any

func (w wantedRoute) heldBy(generated client.Object) (bool, error) {
	route, ok := generated.(*unstructured.Unstructured)
	if !ok {
		return false, fmt.Errorf("an HTTPRoute read as %T", generated)
	}
	spec, _, _ := unstructured.NestedFieldNoCopy(route.Object, "spec")
	return contains(spec, map[string]any(w)), nil
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
