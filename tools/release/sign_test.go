//go:build release

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/registry"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// TestSignedReleaseVerifiesWithCosign signs a release with --sign-key and checks every image and chart with cosign
// itself (`cosign verify --key`, the pinned tools/cosign), as a user does before installing: the release's public key
// verifies all eight, another key none, and an unsigned release is refused.
func TestSignedReleaseVerifiesWithCosign(t *testing.T) {
	ctx := t.Context()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	cosign := filepath.Join(root, "bin", "cosign")
	if _, err := os.Stat(cosign); err != nil {
		t.Fatalf("%v: run `make bin/cosign` (make release-test does)", err)
	}
	reg, err := registry.Start(ctx, registry.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Stop() })
	keys := t.TempDir()
	private, public, err := registry.WriteKeyPair(keys, "release")
	if err != nil {
		t.Fatal(err)
	}
	_, otherPublic, err := registry.WriteKeyPair(keys, "other")
	if err != nil {
		t.Fatal(err)
	}

	const signedVersion, unsignedVersion = "0.0.2-signed.1", "0.0.2-unsigned.1"
	start := time.Now()
	out := mustRun(ctx, t, "--repo", newReleaseTree(t, root, signedVersion).dir, "--registry", reg.Host+"/vi",
		"--version", signedVersion, "--image", releaseImages, "--ca-file", reg.CAFile, "--sign-key", private)
	t.Logf("push and sign of 4 image indexes and 4 charts: %s\n%s", time.Since(start).Round(time.Millisecond), out)
	if n := strings.Count(out, "signed "); n != 8 {
		t.Fatalf("%d signatures, want 8:\n%s", n, out)
	}
	mustRun(ctx, t, "--repo", newReleaseTree(t, root, unsignedVersion).dir, "--registry", reg.Host+"/vi",
		"--version", unsignedVersion, "--image", releaseImages, "--ca-file", reg.CAFile)

	home := t.TempDir()
	start = time.Now()
	for _, ref := range planRefs(reg.Host+"/vi", signedVersion) {
		if out, err := reg.Verify(ctx, cosign, home, public, ref); err != nil {
			t.Errorf("cosign verify --key <release key> %s: %v\n%s", ref, err, out)
		}
		if out, err := reg.Verify(ctx, cosign, home, otherPublic, ref); err == nil {
			t.Errorf("cosign verify --key <another key> %s passed:\n%s", ref, out)
		}
	}
	t.Logf("cosign verify of 8 artifacts with the release's key and another: %s", time.Since(start).Round(time.Millisecond))
	for _, ref := range planRefs(reg.Host+"/vi", unsignedVersion) {
		if out, err := reg.Verify(ctx, cosign, home, public, ref); err == nil || !strings.Contains(out, "no signatures found") {
			t.Errorf("cosign verify of the unsigned %s: %v, want no signatures found:\n%s", ref, err, out)
		}
	}
}
