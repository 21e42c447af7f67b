package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

func TestStatusDue(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	synced := func(ago time.Duration) *v1alpha1.AppsIngress {
		ai := &v1alpha1.AppsIngress{}
		ai.Generation = 3
		ai.Status.ObservedGeneration = 3
		ai.Status.Phase, ai.Status.Reason = v1alpha1.PhaseReady, "Ready"
		ai.Status.ExternalIPs = []string{"198.19.10.5"}
		setPhase(ai, v1alpha1.PhaseReady, "Ready", "served")
		if ago >= 0 {
			ai.Status.LastSyncTime = &metav1.Time{Time: now.Add(-ago)}
		}
		return ai
	}
	cases := []struct {
		name   string
		orig   *v1alpha1.AppsIngress
		change func(*v1alpha1.AppsIngress)
		want   bool
	}{
		{"a re-check that finds the same, synced a minute ago", synced(time.Minute), func(*v1alpha1.AppsIngress) {}, false},
		{"the same, never synced", synced(-1), func(*v1alpha1.AppsIngress) {}, true},
		{"the same, synced LastSyncRefresh ago", synced(LastSyncRefresh), func(*v1alpha1.AppsIngress) {}, true},
		{"a new address", synced(time.Minute), func(ai *v1alpha1.AppsIngress) { ai.Status.ExternalIPs = []string{"198.19.10.6"} }, true},
		{"a new message", synced(time.Minute), func(ai *v1alpha1.AppsIngress) {
			setPhase(ai, v1alpha1.PhaseReady, "Ready", "served again")
		}, true},
		{"a new generation observed", synced(time.Minute), func(ai *v1alpha1.AppsIngress) { ai.Status.ObservedGeneration = 4 }, true},
	}
	for _, c := range cases {
		next := c.orig.DeepCopy()
		c.change(next)
		if got := statusDue(c.orig, next, now); got != c.want {
			t.Errorf("%s: statusDue = %v, want %v", c.name, got, c.want)
		}
	}
}
