//go:build e2e

package e2e_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
)

// TestCloudDirectorClientConventions: what Cloud Director's own clients send works: the auth scheme in lower case,
// collections named with a trailing "/", the System organization's login URL, and logging out with DELETE on the
// login URL (the token is refused afterwards).
func TestCloudDirectorClientConventions(t *testing.T) {
	sys := sysadmin(t)
	raw := func(method, path, authorization string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, srv.url+path, nil)
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	if got := raw("GET", "/cloudapi/1.0.0/orgs", "bearer "+sys.token); got != http.StatusOK {
		t.Errorf(`"Authorization: bearer <token>": %d, want 200`, got)
	}
	if got := raw("GET", "/cloudapi/1.0.0/orgs", "Basic "+sys.token); got != http.StatusUnauthorized {
		t.Errorf(`"Authorization: Basic <token>": %d, want 401`, got)
	}

	provider := func(user, org, password string) (*client, int) {
		t.Helper()
		return tryLoginAt(t, srv, "/cloudapi/1.0.0/sessions/provider", user, org, password)
	}
	admin, status := provider(adminUser, "System", adminPass)
	if status != http.StatusOK || admin.token == "" {
		t.Fatalf("provider login as the system administrator: %d", status)
	}
	tn := newTenant(t, sys)
	var withSlash, without api.Paged[api.Org]
	sys.must(t, "GET", "/cloudapi/1.0.0/orgs/", nil, http.StatusOK, &withSlash)
	sys.must(t, "GET", "/cloudapi/1.0.0/orgs", nil, http.StatusOK, &without)
	if withSlash.ResultTotal != without.ResultTotal || withSlash.ResultTotal == 0 {
		t.Errorf("orgs/ listed %d, orgs %d", withSlash.ResultTotal, without.ResultTotal)
	}
	if _, status := provider(tn.adminN, tn.org.Name, "password-"+tn.adminN); status != http.StatusUnauthorized {
		t.Errorf("provider login as an organization administrator: %d, want 401", status)
	}

	for _, loginURL := range []string{"/cloudapi/1.0.0/sessions", "/cloudapi/1.0.0/sessions/provider"} {
		c := login(t, srv, adminUser, "System", adminPass)
		c.must(t, "DELETE", loginURL, nil, http.StatusNoContent, nil)
		if got := raw("GET", "/cloudapi/1.0.0/orgs", "Bearer "+c.token); got != http.StatusUnauthorized {
			t.Errorf("after DELETE %s the token answers %d, want 401", loginURL, got)
		}
	}
	admin.must(t, "GET", "/cloudapi/1.0.0/sessions/current", nil, http.StatusOK, nil)
}
