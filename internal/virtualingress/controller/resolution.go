package controller

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Values of serviceDiscovery.onMultipleMatches.
const (
	OnMultipleMatchesError  = "error"
	OnMultipleMatchesOldest = "oldest"
)

// resolutionLag compares each backend's status with what the Services of its namespace give now, by the resolve
// policies' rules (a unique match, or the oldest one under "oldest"; Services being deleted do not count). Kyverno may
// drop the Service event that should have re-resolved a VirtualIngress; this finds it. It describes the first
// backend that differs, "" when none does; found says the Services now resolve that backend to a Service its status
// does not name (one appeared or started matching), rather than to no Service at all.
func resolutionLag(backends []backend, services []corev1.Service, onMultipleMatches string) (lag string, found bool) {
	for _, b := range backends {
		if len(b.MatchLabels) == 0 {
			// Not in the spec at its field (a status from before the spec changed): the next write re-resolves it.
			continue
		}
		want, port, state := expectedResolution(b, services, onMultipleMatches)
		if state != b.State || (state == "Resolved" && (want != b.Service || port != b.Port)) {
			found := state == "Resolved"
			got := b.State
			if b.Service != "" {
				got += " (" + b.Service + ")"
			}
			if want != "" {
				state += " (" + want + ")"
			}
			if b.PortName != "" {
				got += fmt.Sprintf(" port %d", b.Port)
				state += fmt.Sprintf(" port %d", port)
			}
			return fmt.Sprintf("%s is %s, the Services make it %s", b.Field, got, state), found
		}
	}
	return "", false
}

// expectedResolution is what the resolve policies would make of a backend now. A backendRef that names its port
// (VirtualHTTPRoute) resolves only to a Service with a port of that name, and to that port's number; any other
// backend's port is not resolution's business (port 0 here and in status).
func expectedResolution(b backend, services []corev1.Service, onMultipleMatches string) (service string, port int32, state string) {
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
	var chosen *corev1.Service
	if len(matches) == 1 || (len(matches) > 1 && onMultipleMatches == OnMultipleMatchesOldest) {
		chosen = matches[0]
		if b.PortName == "" {
			return chosen.Name, b.Port, "Resolved"
		}
		for _, p := range chosen.Spec.Ports {
			if p.Name == b.PortName {
				return chosen.Name, p.Port, "Resolved"
			}
		}
	}
	switch {
	case b.Service != "":
		return b.Service, b.Port, "Stale"
	case len(matches) == 0:
		return "", 0, "NoMatch"
	case chosen == nil:
		return "", 0, "MultipleMatches"
	default:
		return "", 0, "NoPort"
	}
}
