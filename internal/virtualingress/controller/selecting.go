package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// selector is what the spec says of a backend that selects its Service by labels.
type selector struct {
	MatchLabels map[string]string
	// PortName is the port name a VirtualHTTPRoute's backendRef asks for ("" for a number).
	PortName string
}

// virtualIngressSelectors finds every backend of a VirtualIngress's spec that selects its Service by labels, keyed by
// the field path the resolve policies name it by in status.backends.
func virtualIngressSelectors(spec *v1alpha1.VirtualIngressSpec) map[string]selector {
	out := map[string]selector{}
	if b := spec.DefaultBackend; b != nil && b.Service != nil && b.Service.MatchLabels != nil {
		out["spec.defaultBackend"] = selector{MatchLabels: labelMap(b.Service.MatchLabels)}
	}
	for i, rule := range spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for j, path := range rule.HTTP.Paths {
			if s := path.Backend.Service; s != nil && s.MatchLabels != nil {
				out[fmt.Sprintf("spec.rules[%d].http.paths[%d].backend", i, j)] = selector{MatchLabels: labelMap(s.MatchLabels)}
			}
		}
	}
	return out
}

// routeSelectors is virtualIngressSelectors for a VirtualHTTPRoute's backendRefs, with the port name one asks for.
func routeSelectors(spec *virtualHTTPRouteSpec) map[string]selector {
	out := map[string]selector{}
	for i, rule := range spec.Rules {
		for j, ref := range rule.BackendRefs {
			if ref.MatchLabels == nil {
				continue
			}
			s := selector{MatchLabels: ref.MatchLabels}
			if ref.Port != nil && ref.Port.Type == intstr.String {
				s.PortName = ref.Port.StrVal
			}
			out[fmt.Sprintf("spec.rules[%d].backendRefs[%d]", i, j)] = s
		}
	}
	return out
}

func labelMap(in map[string]v1alpha1.LabelValue) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = string(v)
	}
	return out
}
