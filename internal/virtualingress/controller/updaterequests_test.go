package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestGenerationState(t *testing.T) {
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	request := func(state string, age time.Duration, message string, retries int64) unstructured.Unstructured {
		u := *newUpdateRequest()
		u.SetCreationTimestamp(metav1.NewTime(now.Add(-age)))
		status := map[string]any{"retryCount": retries}
		if state != "" {
			status["state"] = state
		}
		if message != "" {
			status["message"] = message
		}
		u.Object["status"] = status
		return u
	}
	cases := []struct {
		name     string
		requests []unstructured.Unstructured
		pending  bool
		failure  string
		orphanIn time.Duration
	}{
		{"none", nil, false, "", 0},
		{"pending", []unstructured.Unstructured{request("Pending", time.Minute, "", 0)}, true, "", 0},
		{"failed, to be retried", []unstructured.Unstructured{request("Failed", time.Minute, "admission refused", 1)}, true, "admission refused", 0},
		{"just created, its state not written yet: looked at again when it would be an orphan",
			[]unstructured.Unstructured{request("", time.Second, "", 0)}, true, "", statelessOrphanAfter - time.Second},
		{"no state for longer than statelessOrphanAfter: an orphan no one processes",
			[]unstructured.Unstructured{request("", statelessOrphanAfter, "", 0)}, false, "", 0},
		{"completed, not deleted yet", []unstructured.Unstructured{request("Completed", time.Second, "", 0)}, false, "", 0},
		{"skipped", []unstructured.Unstructured{request("Skip", time.Second, "", 0)}, false, "", 0},
		{"an orphan beside a pending one", []unstructured.Unstructured{
			request("", time.Hour, "", 0), request("Pending", time.Second, "", 0)}, true, "", 0},
		{"two without a state: the younger one decides", []unstructured.Unstructured{
			request("", 20*time.Second, "", 0), request("", 5*time.Second, "", 0)}, true, "", statelessOrphanAfter - 5*time.Second},
	}
	for _, c := range cases {
		g := generationState(c.requests, now)
		if g.pending != c.pending || g.failure != c.failure || g.orphanIn != c.orphanIn {
			t.Errorf("%s: pending %v, failure %q, orphan in %s; want %v, %q, %s",
				c.name, g.pending, g.failure, g.orphanIn, c.pending, c.failure, c.orphanIn)
		}
	}
}
