package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// MeshGateway is Istio's name for sidecar-to-sidecar traffic inside the mesh.
const MeshGateway = "mesh"

// DeveloperRouteScope says which requests may select a developer route besides sending the header. Without it any
// client that reaches the production host, through an ingress gateway the internet included, could pick a developer
// namespace and have its requests served by a developer's copy, with that developer's credentials.
type DeveloperRouteScope struct {
	// Gateways whose traffic the developer routes match (Istio HTTPMatchRequest.gateways): "mesh" for traffic inside
	// the mesh, "<namespace>/<name>" for a Gateway. Unset: [mesh]. An empty list: every gateway the VirtualService is
	// bound to.
	Gateways []string `json:"gateways"`
	// SourceNamespaces, when set, limits the developer routes to requests from workloads in these namespaces.
	SourceNamespaces []string `json:"sourceNamespaces"`
	// SourceLabels, when set, limits the developer routes to requests from workloads carrying these labels.
	SourceLabels map[string]string `json:"sourceLabels"`
}

func (s *DeveloperRouteScope) setDefaults() {
	if s.Gateways == nil {
		s.Gateways = []string{MeshGateway}
	}
}

func (s *DeveloperRouteScope) equal(o DeveloperRouteScope) bool {
	return slices.Equal(s.Gateways, o.Gateways) && slices.Equal(s.SourceNamespaces, o.SourceNamespaces) &&
		maps.Equal(s.SourceLabels, o.SourceLabels)
}

func (s *DeveloperRouteScope) validate() error {
	var errs []error
	for i, g := range s.Gateways {
		if g == MeshGateway {
			continue
		}
		ns, name, namespaced := strings.Cut(g, "/")
		if !namespaced {
			ns, name = "", g
		}
		if ns != "" {
			errs = append(errs, namespaceErr(fmt.Sprintf("developerRoutes.gateways[%d]", i), ns))
		}
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("developerRoutes.gateways[%d]: %q is not mesh or [<namespace>/]<gateway name>: %s", i, g, strings.Join(msgs, "; ")))
		}
	}
	for i, ns := range s.SourceNamespaces {
		errs = append(errs, namespaceErr(fmt.Sprintf("developerRoutes.sourceNamespaces[%d]", i), ns))
	}
	for k, v := range s.SourceLabels {
		if msgs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("developerRoutes.sourceLabels[%s]: %s", k, strings.Join(msgs, "; ")))
		}
	}
	return errors.Join(errs...)
}

// Matches returns the Istio match entries of one developer route: base (the header, and the port) restricted to the
// scope. Entries are alternatives, so each source namespace gets one.
func (s *DeveloperRouteScope) Matches(base map[string]any) []any {
	scoped := maps.Clone(base)
	if len(s.Gateways) > 0 {
		gateways := make([]any, len(s.Gateways))
		for i, g := range s.Gateways {
			gateways[i] = g
		}
		scoped["gateways"] = gateways
	}
	if len(s.SourceLabels) > 0 {
		labels := make(map[string]any, len(s.SourceLabels))
		for k, v := range s.SourceLabels {
			labels[k] = v
		}
		scoped["sourceLabels"] = labels
	}
	if len(s.SourceNamespaces) == 0 {
		return []any{scoped}
	}
	matches := make([]any, len(s.SourceNamespaces))
	for i, ns := range s.SourceNamespaces {
		m := maps.Clone(scoped)
		m["sourceNamespace"] = ns
		matches[i] = m
	}
	return matches
}
