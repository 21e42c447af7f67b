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
	}{
		{"none", nil, false, ""},
		{"pending", []unstructured.Unstructured{request("Pending", time.Minute, "", 0)}, true, ""},
		{"failed, to be retried", []unstructured.Unstructured{request("Failed", time.Minute, "admission refused", 1)}, true, "admission refused"},
		{"just created, its state not written yet", []unstructured.Unstructured{request("", time.Second, "", 0)}, true, ""},
		{"no state for longer than statelessOrphanAfter: an orphan no one processes",
			[]unstructured.Unstructured{request("", statelessOrphanAfter, "", 0)}, false, ""},
		{"completed, not deleted yet", []unstructured.Unstructured{request("Completed", time.Second, "", 0)}, false, ""},
		{"skipped", []unstructured.Unstructured{request("Skip", time.Second, "", 0)}, false, ""},
		{"an orphan beside a pending one", []unstructured.Unstructured{
			request("", time.Hour, "", 0), request("Pending", time.Second, "", 0)}, true, ""},
	}
	for _, c := range cases {
		pending, failure := generationState(c.requests, now)
		if pending != c.pending || failure != c.failure {
			t.Errorf("%s: pending %v, failure %q; want %v, %q", c.name, pending, failure, c.pending, c.failure)
		}
	}
}
