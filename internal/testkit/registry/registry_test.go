//go:build release

package registry

import (
	"net/http"
	"strings"
	"testing"
)

// TestStartServesTLSWithItsCA starts the real registry and checks it answers the distribution API over TLS to a
// client trusting only its CA, and refuses a client that trusts only the system's CAs.
func TestStartServesTLSWithItsCA(t *testing.T) {
	r, err := Start(t.Context(), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	c, err := r.Client(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get("https://" + r.Host + "/v2/_catalog")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Docker-Distribution-Api-Version") != "registry/2.0" {
		t.Fatalf("GET /v2/_catalog: %s, API version %q", resp.Status, resp.Header.Get("Docker-Distribution-Api-Version"))
	}
	untrusted, err := (&http.Client{}).Get("https://" + r.Host + "/v2/")
	if err == nil {
		untrusted.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client without the CA got %v, want a certificate error", err)
	}
	toml := r.HostsTOML()
	for _, want := range []string{`server = "https://` + r.Host + `"`, `ca = "` + r.CAFile + `"`, `capabilities = ["pull", "resolve"]`} {
		if !strings.Contains(toml, want) {
			t.Errorf("hosts.toml lacks %s:\n%s", want, toml)
		}
	}
}
