// Package routes computes, without any I/O, what the operator wants in a production Service's VirtualService:
// the developer routes (only to Services with a ready endpoint on a compatible port), the default route(s) from the
// template, and how they are merged with routes other writers added.
package routes

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/config"
)

// RoutePrefix marks the http routes the operator owns. Routes with other names (or none) belong to someone else and
// are kept where they are relative to each other, between the developer routes and the default route.
const RoutePrefix = "vso-"

// Developer is what the operator knows about one developer namespace for one production Service.
type Developer struct {
	Namespace string
	// Service of the same name in Namespace, nil if there is none.
	Service *corev1.Service
	// Slices are the EndpointSlices of Service (label kubernetes.io/service-name).
	Slices []discoveryv1.EndpointSlice
	// Unreadable, if set, says why the namespace could not be read (for example missing RBAC); no route is added.
	Unreadable string
}

// Input is everything a VirtualService depends on.
type Input struct {
	Config     *config.Config
	Service    *corev1.Service
	Developers []Developer
}

// Skip records a developer Service that exists but gets no route, and why.
type Skip struct {
	Namespace string
	Reason    string
}

// Result is the operator's part of one VirtualService.
type Result struct {
	Template        *config.Rendered
	DeveloperRoutes []map[string]any
	DefaultRoutes   []map[string]any
	// Active lists the developer namespaces that got a route, in configuration order.
	Active  []string
	Skipped []Skip
}

// Compute derives the routes for in.Service. Developer routes come in the order of developerNamespaces and are all
// before the default route(s), since Istio evaluates routes in order and the default route matches everything.
func Compute(in Input) (*Result, error) {
	rendered, err := in.Config.Template().Render(in.Service.Name)
	if err != nil {
		return nil, fmt.Errorf("rendering the template for %s: %w", in.Service.Name, err)
	}
	ports := routablePorts(in.Service)
	res := &Result{Template: rendered}
	for _, dev := range in.Developers {
		if dev.Service == nil && dev.Unreadable == "" {
			continue
		}
		if in.Config.IsExcluded(dev.Namespace) || dev.Namespace == in.Service.Namespace {
			continue
		}
		routes, reason := developerRoutes(in.Config, in.Service.Name, ports, dev)
		if len(routes) == 0 {
			res.Skipped = append(res.Skipped, Skip{Namespace: dev.Namespace, Reason: reason})
			continue
		}
		res.DeveloperRoutes = append(res.DeveloperRoutes, routes...)
		res.Active = append(res.Active, dev.Namespace)
	}
	res.DefaultRoutes = defaultRoutes(rendered.DefaultRoutes, in.Service, ports)
	return res, nil
}

// routablePorts are the production Service's TCP ports (HTTP routing does not apply to UDP or SCTP), by number.
func routablePorts(svc *corev1.Service) []corev1.ServicePort {
	var ports []corev1.ServicePort
	for _, p := range svc.Spec.Ports {
		if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
			ports = append(ports, p)
		}
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i].Port < ports[j].Port })
	return ports
}

// developerRoutes gives the routes to dev for the production ports, or none and the reason. With one production
// port the route matches on the header only; with several, one route per port also matches the port, so a request
// never reaches a developer port other than the one it was sent to.
func developerRoutes(cfg *config.Config, service string, prodPorts []corev1.ServicePort, dev Developer) ([]map[string]any, string) {
	if dev.Unreadable != "" {
		return nil, "namespace not readable: " + dev.Unreadable
	}
	if len(prodPorts) == 0 {
		return nil, "the production Service has no TCP port"
	}
	if dev.Service.Spec.Type == corev1.ServiceTypeExternalName {
		return nil, "ExternalName Service has no endpoints"
	}
	host := fmt.Sprintf("%s.%s.svc.cluster.local", service, dev.Namespace)
	var routes []map[string]any
	var unready []string
	compatible := 0
	for _, p := range prodPorts {
		d, ok := compatiblePort(p, dev.Service.Spec.Ports)
		if !ok {
			continue
		}
		compatible++
		if !hasReadyEndpoint(dev.Slices, d) {
			unready = append(unready, portString(d))
			continue
		}
		match := map[string]any{"headers": map[string]any{cfg.HeaderName: map[string]any{"exact": dev.Namespace}}}
		name := RoutePrefix + "dev-" + dev.Namespace
		if len(prodPorts) > 1 {
			match["port"] = int64(p.Port)
			name = fmt.Sprintf("%s-%d", name, p.Port)
		}
		routes = append(routes, map[string]any{
			"name":  name,
			"match": cfg.DeveloperRoutes.Matches(match),
			"route": []any{map[string]any{"destination": map[string]any{
				"host": host,
				"port": map[string]any{"number": int64(d.Port)},
			}}},
		})
	}
	switch {
	case len(routes) > 0:
		return routes, ""
	case compatible == 0:
		return nil, "no port compatible with the production Service's " + portsString(prodPorts)
	default:
		return nil, "no ready endpoint on port " + strings.Join(unready, ", ")
	}
}

// compatiblePort finds the developer port serving what production port p serves: the one with the same name when p
// is named (port numbers may legitimately differ between environments), else the one with the same number.
func compatiblePort(p corev1.ServicePort, devPorts []corev1.ServicePort) (corev1.ServicePort, bool) {
	for _, d := range devPorts {
		if d.Protocol != "" && d.Protocol != corev1.ProtocolTCP {
			continue
		}
		if p.Name != "" && d.Name == p.Name {
			return d, true
		}
	}
	for _, d := range devPorts {
		if (d.Protocol == "" || d.Protocol == corev1.ProtocolTCP) && d.Port == p.Port {
			return d, true
		}
	}
	return corev1.ServicePort{}, false
}

// hasReadyEndpoint reports whether a slice lists port (EndpointSlice ports carry the Service port's name) with an
// endpoint that is ready. A nil ready condition counts as ready, as the EndpointSlice API defines.
func hasReadyEndpoint(slices []discoveryv1.EndpointSlice, port corev1.ServicePort) bool {
	for _, s := range slices {
		if !slicePortMatches(s.Ports, port) {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				return true
			}
		}
	}
	return false
}

func slicePortMatches(ports []discoveryv1.EndpointPort, port corev1.ServicePort) bool {
	return slices.ContainsFunc(ports, func(ep discoveryv1.EndpointPort) bool {
		name := ""
		if ep.Name != nil {
			name = *ep.Name
		}
		proto := corev1.ProtocolTCP
		if ep.Protocol != nil {
			proto = *ep.Protocol
		}
		want := port.Protocol
		if want == "" {
			want = corev1.ProtocolTCP
		}
		return name == port.Name && proto == want
	})
}

// defaultRoutes names the template's routes as the operator's and, when the production Service has a single port,
// fills in that port where a destination to it has none: a destination port avoids Istio guessing.
func defaultRoutes(routes []map[string]any, svc *corev1.Service, ports []corev1.ServicePort) []map[string]any {
	out := make([]map[string]any, 0, len(routes))
	for i, r := range routes {
		r["name"] = RoutePrefix + "default"
		if len(routes) > 1 {
			r["name"] = fmt.Sprintf("%sdefault-%d", RoutePrefix, i)
		}
		if len(ports) == 1 {
			fillPort(r, svc, ports[0].Port)
		}
		out = append(out, r)
	}
	return out
}

func fillPort(route map[string]any, svc *corev1.Service, port int32) {
	dests, _ := route["route"].([]any)
	for _, d := range dests {
		dm, _ := d.(map[string]any)
		dest, _ := dm["destination"].(map[string]any)
		if dest == nil || dest["port"] != nil || !refersTo(dest["host"], svc) {
			continue
		}
		dest["port"] = map[string]any{"number": int64(port)}
	}
}

func refersTo(host any, svc *corev1.Service) bool {
	h, _ := host.(string)
	base := svc.Name + "." + svc.Namespace
	return h == svc.Name || h == base || h == base+".svc" || h == base+".svc.cluster.local"
}

func portString(p corev1.ServicePort) string {
	if p.Name != "" {
		return fmt.Sprintf("%d (%s)", p.Port, p.Name)
	}
	return fmt.Sprint(p.Port)
}

func portsString(ports []corev1.ServicePort) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = portString(p)
	}
	return strings.Join(s, ", ")
}
