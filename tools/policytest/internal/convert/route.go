package convert

import (
	"fmt"
	"maps"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// maxRouteRules is HTTPRoute's limit on spec.rules (Gateway API v1.7): each Ingress path is one rule, so a host with
// more paths needs several routes.
const maxRouteRules = 16

// routeDraft collects the rules of one host before the routes are named.
type routeDraft struct {
	host       string
	hasPaths   bool // holds paths of spec.rules, not only the defaultBackend
	hasDefault bool
	rules      []routeRule
	notes      []string
}

// convertOne maps one Ingress or VirtualIngress to its routes, grouped by host: an HTTPRoute's rules apply to all of
// its hostnames, so one route for two hosts would send each host's paths to the other too.
func convertOne(s convertSource, gateway *parentRef) (conversion, error) {
	c := conversion{source: s}
	spec := s.obj.Spec
	parent, note := parentFor(s.obj, gateway)
	c.notes = appendNote(c.notes, note)
	c.notes = append(c.notes, tlsNotes(spec.TLS)...)
	c.notes = appendNote(c.notes, annotationsNote(s.obj.Metadata.Annotations))

	var drafts []*routeDraft
	byHost := map[string]*routeDraft{}
	draftFor := func(host string) *routeDraft {
		if d, ok := byHost[host]; ok {
			return d
		}
		d := &routeDraft{host: host}
		if strings.HasPrefix(host, "*.") {
			d.notes = append(d.notes, fmt.Sprintf("host %s: an Ingress wildcard matches exactly one DNS label, a Gateway API "+
				"wildcard one or more (a.b%s too)", host, host[1:]))
		}
		byHost[host] = d
		drafts = append(drafts, d)
		return d
	}
	virtual := s.obj.Kind == virtualIngressGVK.Kind
	var pathless []int // rules without paths, noted once the routes have names
	for i, rule := range spec.Rules {
		if rule.HTTP == nil || len(rule.HTTP.Paths) == 0 {
			pathless = append(pathless, i)
			continue
		}
		d := draftFor(string(rule.Host))
		d.hasPaths = true
		for j, p := range rule.HTTP.Paths {
			field := fmt.Sprintf("spec.rules[%d].http.paths[%d]", i, j)
			match, pathNote, err := pathMatchFor(p, field)
			if err != nil {
				return c, err
			}
			ref, refNote, err := backendRefFor(p.Backend, field+".backend", virtual)
			if err != nil {
				return c, err
			}
			d.notes = appendNote(appendNote(d.notes, pathNote), refNote)
			d.rules = append(d.rules, routeRule{Matches: []routeMatch{{Path: match}}, BackendRefs: []backendRef{ref}})
		}
	}
	if spec.DefaultBackend != nil {
		ref, refNote, err := backendRefFor(*spec.DefaultBackend, "spec.defaultBackend", virtual)
		if err != nil {
			return c, err
		}
		// Created here if the rules did not: then it comes last, after every host's route.
		d := draftFor("")
		d.hasDefault = true
		d.notes = appendNote(d.notes, refNote)
		d.rules = append(d.rules, routeRule{Matches: []routeMatch{{Path: pathMatch{Type: "PathPrefix", Value: "/"}}}, BackendRefs: []backendRef{ref}})
	}

	hosts := make([]string, len(drafts))
	for i, d := range drafts {
		hosts[i] = d.host
	}
	name := s.obj.Metadata.Name
	names, err := routeNames(name, hosts)
	if err != nil {
		return c, err
	}
	defaultRoute := ""
	for i, d := range drafts {
		notes := d.notes
		if keepsName := len(drafts) == 1 || d.host == ""; keepsName && names[i] != name {
			notes = append(notes, fmt.Sprintf("named %s: a VirtualHTTPRoute's name has at most %d characters", names[i], maxRouteName))
		}
		if d.hasDefault {
			defaultRoute = names[i]
			notes = append(notes, "spec.defaultBackend became the last rule, PathPrefix \"/\" for every hostname: Gateway API has no "+
				"default backend. As with the Ingress default, rules naming the request's hostname or a longer path take precedence, "+
				"so it gets only what no other rule matches; on a shared Gateway that includes the unmatched requests of every "+
				"hostname its listeners serve")
		}
		if len(d.rules) > maxRouteRules {
			notes = append(notes, fmt.Sprintf("%d rules, but an HTTPRoute takes at most %d: the API server refuses this route; "+
				"split its paths over several routes for the same hostname", len(d.rules), maxRouteRules))
		}
		route := virtualHTTPRoute{
			APIVersion: virtualHTTPRouteAPIVersion,
			Kind:       virtualHTTPRouteKind,
			Metadata:   routeMeta{Name: names[i], Namespace: s.obj.Metadata.Namespace, Labels: maps.Clone(s.obj.Metadata.Labels)},
			Spec:       routeSpec{ParentRefs: []parentRef{parent}, Rules: d.rules},
		}
		if d.host != "" {
			route.Spec.Hostnames = []string{d.host}
		}
		c.routes = append(c.routes, convertedRoute{route: route, covers: d.covers(), notes: notes})
	}
	for _, i := range pathless {
		c.notes = append(c.notes, pathlessNote(i, string(spec.Rules[i].Host), defaultRoute))
	}
	return c, nil
}

func (d *routeDraft) covers() string {
	switch {
	case d.host != "":
		return "the rules of host " + d.host
	case d.hasPaths && d.hasDefault:
		return "the rules without a host and the defaultBackend"
	case d.hasDefault:
		return "the defaultBackend"
	}
	return "the rules without a host"
}

func pathlessNote(rule int, host, defaultRoute string) string {
	what := "no host"
	if host != "" {
		what = "host " + host
	}
	if defaultRoute != "" {
		return fmt.Sprintf("spec.rules[%d] (%s) has no paths: its requests went to spec.defaultBackend, as they now go to the "+
			"catch-all rule of %s", rule, what, defaultRoute)
	}
	return fmt.Sprintf("spec.rules[%d] (%s) has no paths and there is no defaultBackend: the Ingress controller's own default "+
		"backend answered its requests; nothing converted", rule, what)
}

func pathMatchFor(p v1alpha1.Path, field string) (pathMatch, string, error) {
	if p.PathType == "" {
		return pathMatch{}, "", fmt.Errorf("%s: pathType is required", field)
	}
	switch networkingv1.PathType(p.PathType) {
	case networkingv1.PathTypePrefix, networkingv1.PathTypeExact:
		if !strings.HasPrefix(p.Path, "/") {
			return pathMatch{}, "", fmt.Errorf("%s: pathType %s needs an absolute path, not %q", field, p.PathType, p.Path)
		}
		if networkingv1.PathType(p.PathType) == networkingv1.PathTypeExact {
			return pathMatch{Type: "Exact", Value: p.Path}, "", nil
		}
		return pathMatch{Type: "PathPrefix", Value: p.Path}, "", nil
	case networkingv1.PathTypeImplementationSpecific:
		value, shown := p.Path, fmt.Sprintf("path %q", p.Path)
		if value == "" {
			value, shown = "/", "no path"
		}
		note := fmt.Sprintf("%s: pathType ImplementationSpecific (%s) became PathPrefix %q, as Gateway API has no such type: "+
			"check how your Ingress controller matched it (ingress-nginx, for one, as a regular expression under use-regex) "+
			"and pick Exact, PathPrefix or RegularExpression", field, shown, value)
		if problem := pathPrefixProblem(value); problem != "" {
			note += "; as it is, the API server refuses it: " + problem
		}
		return pathMatch{Type: "PathPrefix", Value: value}, note, nil
	}
	return pathMatch{}, "", fmt.Errorf("%s: unknown pathType %q", field, p.PathType)
}

// pathPrefixProblem is why HTTPRoute's validation refuses value as a PathPrefix, "" if it does not. An Ingress
// refuses the same for Prefix and Exact paths, but lets ImplementationSpecific ones through.
func pathPrefixProblem(value string) string {
	for _, seq := range []string{"//", "/./", "/../", "%2f", "%2F"} {
		if strings.Contains(value, seq) {
			return fmt.Sprintf("a PathPrefix must not contain %q", seq)
		}
	}
	return ""
}

func backendRefFor(b v1alpha1.Backend, field string, virtual bool) (backendRef, string, error) {
	if (b.Service == nil) == (b.Resource == nil) {
		return backendRef{}, "", fmt.Errorf("%s: exactly one of service or resource must be set", field)
	}
	if r := b.Resource; r != nil {
		if r.Kind == "" || r.Name == "" {
			return backendRef{}, "", fmt.Errorf("%s.resource: kind and name are required", field)
		}
		ref := backendRef{Kind: r.Kind, Name: r.Name}
		kind := r.Kind
		if r.APIGroup != nil && *r.APIGroup != "" {
			ref.Group = *r.APIGroup
			kind += "." + ref.Group
		}
		return ref, fmt.Sprintf("%s.resource (%s %s) became a backendRef of that kind: Gateway API asks implementations to "+
			"support only Services, and the virtual-ingress policies resolve only Services; check that your Gateway routes "+
			"to it", field, kind, r.Name), nil
	}
	svc := b.Service
	if (svc.Name != "") == (len(svc.MatchLabels) > 0) {
		return backendRef{}, "", fmt.Errorf("%s.service: exactly one of name or matchLabels must be set", field)
	}
	if len(svc.MatchLabels) > 0 && !virtual {
		return backendRef{}, "", fmt.Errorf("%s.service.matchLabels: only a VirtualIngress selects its Service by labels", field)
	}
	if (svc.Port.Number != 0) == (svc.Port.Name != "") {
		return backendRef{}, "", fmt.Errorf("%s.service.port: exactly one of name or number must be set", field)
	}
	ref := backendRef{Name: svc.Name}
	for k, v := range svc.MatchLabels {
		if ref.MatchLabels == nil {
			ref.MatchLabels = map[string]string{}
		}
		ref.MatchLabels[k] = string(v)
	}
	if svc.Port.Number != 0 {
		port := intstr.FromInt32(svc.Port.Number)
		ref.Port = &port
		return ref, "", nil
	}
	port := intstr.FromString(svc.Port.Name)
	ref.Port = &port
	if svc.Name == "" {
		// The policies read the number from the Service the labels select.
		return ref, "", nil
	}
	return ref, fmt.Sprintf("%s.service.port.name %q: a VirtualHTTPRoute takes a port name only with matchLabels (HTTPRoute "+
		"needs the number): replace it with the number of Service %s's port %s, or the API server refuses the route",
		field, svc.Port.Name, svc.Name, svc.Port.Name), nil
}

func appendNote(notes []string, note string) []string {
	if note == "" {
		return notes
	}
	return append(notes, note)
}
