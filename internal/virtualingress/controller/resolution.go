package controller

import (
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// Values of serviceDiscovery.onMultipleMatches.
const (
	OnMultipleMatchesError  = "error"
	OnMultipleMatchesOldest = "oldest"
)

// resolutionLag compares each backend's status with what the Services of its namespace give now, by the resolve
// policies' rules (a unique match, or the oldest one under "oldest"; Services being deleted do not count). Kyverno may
// drop the Service event that should have re-resolved a VirtualIngress, and a write resolved from Kyverno's informer
// of Services may miss one created just before; this finds both. It describes the first backend that differs, "" when
// none does; found names a Service the Services now hold that its status does not name (one appeared or started
// matching), "" when the backend lags toward fewer.
func resolutionLag(backends []backend, services []corev1.Service, onMultipleMatches string) (lag, found string) {
	for _, b := range backends {
		if len(b.MatchLabels) == 0 {
			// Not in the spec at its field (a status from before the spec changed): the next write re-resolves it.
			continue
		}
		r := expectedResolution(b, services, onMultipleMatches)
		want, state := r.service, string(r.state)
		if r.state != b.State || (r.state == v1alpha1.BackendResolved && (want != b.Service || r.port != b.Port)) {
			found := ""
			if r.state == v1alpha1.BackendResolved {
				found = want
			}
			got := string(b.State)
			if b.Service != "" {
				got += " (" + b.Service + ")"
			}
			if want != "" {
				state += " (" + want + ")"
			}
			if b.PortName != "" {
				got += fmt.Sprintf(" port %d", b.Port)
				state += fmt.Sprintf(" port %d", r.port)
			}
			return fmt.Sprintf("%s is %s, the Services make it %s", b.Field, got, state), found
		}
		if !slices.Equal(r.candidates, b.Candidates) {
			found := ""
			if i := slices.IndexFunc(r.candidates, func(name string) bool { return !slices.Contains(b.Candidates, name) }); i >= 0 {
				found = r.candidates[i]
			}
			return fmt.Sprintf("%s lists candidates %v, the Services make them %v", b.Field, b.Candidates, r.candidates), found
		}
	}
	return "", ""
}

// namedByTheServer says the Service name of services was created with metadata.generateName: admission saw it without
// a name, so Kyverno never follows its creation (see verdict.now).
func namedByTheServer(services []corev1.Service, name string) bool {
	i := slices.IndexFunc(services, func(s corev1.Service) bool { return s.Name == name })
	return i >= 0 && services[i].GenerateName != ""
}

// backendNoPort is a VirtualHTTPRoute's backendRef whose Service has no port of the name it asks for (a VirtualIngress
// names no port, and its API has no such state).
const backendNoPort v1alpha1.BackendState = "NoPort"

// resolution is what the resolve policies would write for one backend.
type resolution struct {
	service string
	port    int32
	state   v1alpha1.BackendState
	// candidates are the matching Services by name, only when there are several.
	candidates []string
}

// expectedResolution is what the resolve policies would make of a backend now. A backendRef that names its port
// (VirtualHTTPRoute) resolves only to a Service with a port of that name, and to that port's number; any other
// backend's port is not resolution's business (port 0 here and in status).
func expectedResolution(b backend, services []corev1.Service, onMultipleMatches string) resolution {
	selector := labels.SelectorFromSet(b.MatchLabels)
	var matches []*corev1.Service
	for i := range services {
		s := &services[i]
		if s.DeletionTimestamp == nil && selector.Matches(labels.Set(s.Labels)) {
			matches = append(matches, s)
		}
	}
	sort.Slice(matches, func(i, j int) bool {
		if onMultipleMatches == OnMultipleMatchesOldest && !matches[i].CreationTimestamp.Equal(&matches[j].CreationTimestamp) {
			return matches[i].CreationTimestamp.Before(&matches[j].CreationTimestamp)
		}
		return matches[i].Name < matches[j].Name
	})
	var candidates []string
	if len(matches) > 1 {
		for _, s := range matches {
			candidates = append(candidates, s.Name)
		}
		slices.Sort(candidates)
	}
	var chosen *corev1.Service
	if len(matches) == 1 || (len(matches) > 1 && onMultipleMatches == OnMultipleMatchesOldest) {
		chosen = matches[0]
		if b.PortName == "" {
			return resolution{chosen.Name, b.Port, v1alpha1.BackendResolved, candidates}
		}
		for _, p := range chosen.Spec.Ports {
			if p.Name == b.PortName {
				return resolution{chosen.Name, p.Port, v1alpha1.BackendResolved, candidates}
			}
		}
	}
	switch {
	case b.Service != "":
		return resolution{b.Service, b.Port, v1alpha1.BackendStale, candidates}
	case len(matches) == 0:
		return resolution{state: v1alpha1.BackendNoMatch}
	case chosen == nil:
		return resolution{state: v1alpha1.BackendMultipleMatches, candidates: candidates}
	default:
		return resolution{state: backendNoPort, candidates: candidates}
	}
}
