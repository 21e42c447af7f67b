package controller

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

func service(name string, age time.Duration, labels map[string]string) corev1.Service {
	return corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: labels, CreationTimestamp: metav1.NewTime(time.Unix(1_000_000, 0).Add(-age)),
	}}
}

// statusOf is a backend's status entry: its state, the Service it names and the candidates it lists.
func statusOf(state v1alpha1.BackendState, service string, candidates ...string) backend {
	return backend{BackendStatus: v1alpha1.BackendStatus{State: state, Service: service, Candidates: candidates}}
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
		{"resolved and still unique", statusOf("Resolved", "a"), []corev1.Service{shop("a", 0), service("b", 0, nil)}, "error", false, false},
		{"resolved Service recreated under a new name", statusOf("Resolved", "a"), []corev1.Service{shop("b", 0)}, "error", true, true},
		{"resolved Service gone, nothing matches: the policy says Stale", statusOf("Resolved", "a"), nil, "error", true, false},
		{"stale and still nothing", statusOf("Stale", "a"), nil, "error", false, false},
		{"a Service being deleted does not count", statusOf("Stale", "leaving"), []corev1.Service{deleting}, "error", false, false},
		{"no match, then one appears", statusOf("NoMatch", ""), []corev1.Service{shop("a", 0)}, "error", true, true},
		{"several under error", statusOf("MultipleMatches", "", "a", "b"), []corev1.Service{shop("b", 0), shop("a", 0)}, "error", false, false},
		{"several under oldest picks the oldest", statusOf("Resolved", "old", "new", "old"), []corev1.Service{shop("new", 0), shop("old", time.Hour)}, "oldest", false, false},
		// A write resolved from an informer that had not seen the newer Service yet: the right Service, but not the
		// whole story.
		{"the oldest, written before the second Service was seen", statusOf("Resolved", "old"), []corev1.Service{shop("new", 0), shop("old", time.Hour)}, "oldest", true, true},
		{"a third Service under error", statusOf("MultipleMatches", "", "a", "b"), []corev1.Service{shop("a", 0), shop("b", 0), shop("c", 0)}, "error", true, true},
		{"a candidate gone, still several", statusOf("Resolved", "old", "new", "newer", "old"), []corev1.Service{shop("new", 0), shop("old", time.Hour)}, "oldest", true, false},
		{"oldest ties break on name", statusOf("Resolved", "b"), []corev1.Service{shop("b", 0), shop("a", 0)}, "oldest", true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.backend.Field = "spec.defaultBackend"
			c.backend.MatchLabels = sel
			lag, found := resolutionLag([]backend{c.backend}, c.services, c.mode)
			if (lag != "") != c.lagging || (found != "") != c.found {
				t.Fatalf("lag %q found %q, want lagging=%v found=%v", lag, found, c.lagging, c.found)
			}
		})
	}
}

// Only a Service created with generateName is named by the server.
func TestNamedByTheServer(t *testing.T) {
	services := []corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "tenant-x7k2p", GenerateName: "tenant-"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "a9f3"}},
	}
	for name, want := range map[string]bool{"tenant-x7k2p": true, "a9f3": false, "gone": false} {
		if got := namedByTheServer(services, name); got != want {
			t.Errorf("namedByTheServer(%q) = %v, want %v", name, got, want)
		}
	}
}
