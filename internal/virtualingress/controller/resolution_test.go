package controller

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func service(name string, age time.Duration, labels map[string]string) corev1.Service {
	return corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: labels, CreationTimestamp: metav1.NewTime(time.Unix(1_000_000, 0).Add(-age)),
	}}
}

func TestResolutionLag(t *testing.T) {
	sel := map[string]string{"app": "shop"}
	shop := func(name string, age time.Duration) corev1.Service { return service(name, age, sel) }
	deleting := shop("leaving", time.Hour)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	cases := []struct {
		name     string
		backend  backend
		services []corev1.Service
		mode     string
		lagging  bool
		found    bool
	}{
		{"resolved and still unique", backend{State: "Resolved", Service: "a"}, []corev1.Service{shop("a", 0), service("b", 0, nil)}, "error", false, false},
		{"resolved Service recreated under a new name", backend{State: "Resolved", Service: "a"}, []corev1.Service{shop("b", 0)}, "error", true, true},
		{"resolved Service gone, nothing matches: the policy says Stale", backend{State: "Resolved", Service: "a"}, nil, "error", true, false},
		{"stale and still nothing", backend{State: "Stale", Service: "a"}, nil, "error", false, false},
		{"a Service being deleted does not count", backend{State: "Stale", Service: "leaving"}, []corev1.Service{deleting}, "error", false, false},
		{"no match, then one appears", backend{State: "NoMatch"}, []corev1.Service{shop("a", 0)}, "error", true, true},
		{"several under error", backend{State: "MultipleMatches", Candidates: []string{"a", "b"}}, []corev1.Service{shop("b", 0), shop("a", 0)}, "error", false, false},
		{"several under oldest picks the oldest", backend{State: "Resolved", Service: "old", Candidates: []string{"new", "old"}}, []corev1.Service{shop("new", 0), shop("old", time.Hour)}, "oldest", false, false},
		// A write resolved from an informer that had not seen the newer Service yet: the right Service, but not the
		// whole story.
		{"the oldest, written before the second Service was seen", backend{State: "Resolved", Service: "old"}, []corev1.Service{shop("new", 0), shop("old", time.Hour)}, "oldest", true, true},
		{"a third Service under error", backend{State: "MultipleMatches", Candidates: []string{"a", "b"}}, []corev1.Service{shop("a", 0), shop("b", 0), shop("c", 0)}, "error", true, true},
		{"a candidate gone, still several", backend{State: "Resolved", Service: "old", Candidates: []string{"new", "newer", "old"}}, []corev1.Service{shop("new", 0), shop("old", time.Hour)}, "oldest", true, false},
		{"oldest ties break on name", backend{State: "Resolved", Service: "b"}, []corev1.Service{shop("b", 0), shop("a", 0)}, "oldest", true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.backend.Field = "spec.defaultBackend"
			c.backend.MatchLabels = sel
			lag, found := resolutionLag([]backend{c.backend}, c.services, c.mode)
			if (lag != "") != c.lagging || found != c.found {
				t.Fatalf("lag %q found=%v, want lagging=%v found=%v", lag, found, c.lagging, c.found)
			}
		})
	}
}
