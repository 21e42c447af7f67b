package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// virtualHTTPRoute is the part of a VirtualHTTPRoute the controller reads. The API has no Go type for the kind: its
// spec is Gateway API's HTTPRouteSpec, whose Go types the shipped binary does not import. Its status uses
// VirtualIngress's types where the two CRDs share a schema.
type virtualHTTPRoute struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              virtualHTTPRouteSpec   `json:"spec"`
	Status            virtualHTTPRouteStatus `json:"status,omitempty"`
}

type virtualHTTPRouteSpec struct {
	Rules []virtualHTTPRouteRule `json:"rules,omitempty"`
}

type virtualHTTPRouteRule struct {
	BackendRefs []selectingBackendRef `json:"backendRefs,omitempty"`
}

// selectingBackendRef is what a backendRef says of a Service it selects by labels; the rest of it is HTTPRoute's.
type selectingBackendRef struct {
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// Port is a number, or with matchLabels the name of a port of the selected Service.
	Port *intstr.IntOrString `json:"port,omitempty"`
}

type virtualHTTPRouteStatus struct {
	Route      *generatedRoute      `json:"route,omitempty"`
	Backends   []routeBackendStatus `json:"backends,omitempty"`
	Conditions []v1alpha1.Condition `json:"conditions,omitempty"`
	Parents    []parent             `json:"parents,omitempty"`
}

// generatedRoute is status.route: the HTTPRoute's name, and its spec as decoded JSON (no Go type, as above).
type generatedRoute struct {
	Name string         `json:"name,omitempty"`
	Spec map[string]any `json:"spec,omitempty"`
}

// routeBackendStatus is a VirtualIngress's backend status with the port number a backendRef resolved to.
type routeBackendStatus struct {
	v1alpha1.BackendStatus `json:",inline"`
	Port                   int32 `json:"port,omitempty"`
}

// decodeVirtualHTTPRoute converts a VirtualHTTPRoute into virtualHTTPRoute.
func decodeVirtualHTTPRoute(obj *unstructured.Unstructured) (*view, error) {
	route := &virtualHTTPRoute{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, route); err != nil {
		return nil, err
	}
	return virtualHTTPRouteView(route), nil
}

func virtualHTTPRouteView(route *virtualHTTPRoute) *view {
	v := &view{meta: route, conditions: route.Status.Conditions, parents: route.Status.Parents}
	if len(route.Status.Backends) > 0 {
		backends := make([]backend, len(route.Status.Backends))
		for i, b := range route.Status.Backends {
			backends[i] = backend{BackendStatus: b.BackendStatus, Port: b.Port}
		}
		v.backends = withSelectors(backends, routeSelectors(&route.Spec))
	}
	if r := route.Status.Route; r != nil {
		v.generatedName = r.Name
		if len(r.Spec) > 0 {
			v.want = wantedRoute(r.Spec)
		}
	}
	return v
}
