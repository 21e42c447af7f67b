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
// backend that differs, "" when none does.
func resolutionLag(backends []backend, services []corev1.Service, onMultipleMatches string) string {
	for _, b := range backends {
		want, state := expectedResolution(b, services, onMultipleMatches)
		if state != b.State || (state == "Resolved" && want != b.Service) {
			got := b.State
			if b.Service != "" {
				got += " (" + b.Service + ")"
			}
			if want != "" {
				state += " (" + want + ")"
			}
			return fmt.Sprintf("%s is %s, the Services make it %s", b.Field, got, state)
		}
	}
	return ""
}

func expectedResolution(b backend, services []corev1.Service, onMultipleMatches string) (service, state string) {
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
	switch {
	case len(matches) == 1 || (len(matches) > 1 && onMultipleMatches == OnMultipleMatchesOldest):
		return matches[0].Name, "Resolved"
	case b.Service != "":
		return b.Service, "Stale"
	case len(matches) == 0:
		return "", "NoMatch"
	default:
		return "", "MultipleMatches"
	}
}
