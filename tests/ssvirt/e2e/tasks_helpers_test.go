//go:build e2e

package e2e_test

import (
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
)

// raw sends a request as Cloud Director's clients do (no Accept: XML on /api) with the given headers, and returns
// the status, headers and body.
func raw(t *testing.T, method, url string, headers map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body
}

// task reads the XML task at href as the SDK does.
func (c *client) task(t *testing.T, href string) (api.Task, int) {
	t.Helper()
	status, h, body := raw(t, "GET", href, map[string]string{"Authorization": "bearer " + c.token})
	var task api.Task
	if status != http.StatusOK {
		return task, status
	}
	if ct := h.Get("Content-Type"); !strings.Contains(ct, "xml") {
		t.Errorf("task %s: Content-Type %q, want XML", href, ct)
	}
	if err := xml.Unmarshal(body, &task); err != nil {
		t.Fatalf("task %s: %v in %s", href, err, body)
	}
	return task, status
}

// waitTask polls the task at href until it has ended and returns it.
func (c *client) waitTask(t *testing.T, href string, timeout time.Duration) api.Task {
	t.Helper()
	var last api.Task
	eventually(t, "task "+href+" ends", timeout, func() (bool, string) {
		task, status := c.task(t, href)
		last = task
		return status == http.StatusOK && task.Status != "running", task.Status
	})
	return last
}
