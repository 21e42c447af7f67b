package gatewayapi

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

// moduleZip is a module zip of example.com/m@v1.0.0 holding one file, and its go.sum hash.
func moduleZip(t *testing.T, content string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, err := w.Create("example.com/m@v1.0.0/config/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.zip")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := dirhash.HashZip(path, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), sum
}

// TestFetchZipChecksTheHashAndCaches: a zip that is not the pinned one is refused and not cached; the pinned one is
// downloaded once and then read from the cache.
func TestFetchZipChecksTheHashAndCaches(t *testing.T) {
	good, sum := moduleZip(t, "kind: CustomResourceDefinition\n")
	bad, _ := moduleZip(t, "kind: Substituted\n")
	var serve atomic.Value
	serve.Store(bad)
	var requests atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/example.com/m/@v/v1.0.0.zip" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(serve.Load().([]byte))
	}))
	defer proxy.Close()
	t.Setenv("GOPROXY", proxy.URL+",direct")
	cache := t.TempDir()
	ctx := context.Background()

	if _, err := fetchZip(ctx, cache, "example.com/m", "v1.0.0", sum); err == nil || !strings.Contains(err.Error(), "want "+sum) {
		t.Fatalf("a substituted zip: got %v, want a hash mismatch", err)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Fatalf("the refused zip left %d files in the cache", len(entries))
	}
	serve.Store(good)
	path, err := fetchZip(ctx, cache, "example.com/m", "v1.0.0", sum)
	if err != nil {
		t.Fatal(err)
	}
	before := requests.Load()
	again, err := fetchZip(ctx, cache, "example.com/m", "v1.0.0", sum)
	if err != nil || again != path {
		t.Fatalf("second fetch: %q, %v", again, err)
	}
	if requests.Load() != before {
		t.Fatal("the second fetch asked the proxy again instead of reading the cache")
	}
}
