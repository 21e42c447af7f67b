//go:build release

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/registry"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// TestReleaseToARealRegistry publishes the repository's four charts and four image indexes to a Distribution
// registry over TLS, and checks them the way users get them: `helm show`/`helm pull` by oci:// with the registry's
// CA, image digests equal to the layouts', an existing version refused, --dry-run pushing nothing, and a bundle
// (--oci-layout) loaded into another path of the registry.
func TestReleaseToARealRegistry(t *testing.T) {
	ctx := t.Context()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	helmBin := filepath.Join(root, "bin", "helm")
	if _, err := os.Stat(helmBin); err != nil {
		t.Fatalf("%v: run `make bin/helm` (make release-test does)", err)
	}
	reg, err := registry.Start(ctx, registry.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Stop() })

	const version = "0.0.1-test.1"
	tree := newReleaseTree(t, root, version)
	base := []string{"--repo", tree.dir, "--registry", reg.Host + "/vi", "--version", version,
		"--image", releaseImages, "--ca-file", reg.CAFile}
	tgt, err := newTarget(ctx, reg.CAFile)
	if err != nil {
		t.Fatal(err)
	}

	out := mustRun(ctx, t, append(base, "--dry-run")...)
	if strings.Count(out, "would push image") != 4 || strings.Count(out, "would push chart") != 4 {
		t.Fatalf("dry run plan:\n%s", out)
	}
	for _, ref := range planRefs(reg.Host+"/vi", version) {
		if ok, err := tgt.exists(ref); err != nil || ok {
			t.Fatalf("after --dry-run %s exists=%v (%v), want nothing pushed", ref, ok, err)
		}
	}

	start := time.Now()
	out = mustRun(ctx, t, base...)
	t.Logf("push of 4 image indexes (2 platforms each) and 4 charts: %s\n%s", time.Since(start).Round(time.Millisecond), out)
	checkImages(ctx, t, tgt, reg.Host+"/vi", version, tree.digests)

	helmEnv := helmHome(t)
	start = time.Now()
	for _, ic := range tree.pairs {
		ref := "oci://" + reg.Host + "/vi/charts/" + ic.chart
		meta := helm(t, helmBin, helmEnv, "show", "chart", ref, "--version", version, "--ca-file", reg.CAFile)
		var c struct{ Version, AppVersion string }
		if err := yaml.Unmarshal([]byte(meta), &c); err != nil {
			t.Fatal(err)
		}
		if c.Version != version || c.AppVersion != version {
			t.Errorf("%s: version %q appVersion %q, want %s", ic.chart, c.Version, c.AppVersion, version)
		}
		values := helm(t, helmBin, helmEnv, "show", "values", ref, "--version", version, "--ca-file", reg.CAFile)
		if !strings.Contains(values, "repository: "+reg.Host+"/vi/"+ic.binary+"\n") || strings.Contains(values, defaultRegistry+"/") {
			t.Errorf("%s: values do not name the pushed image %s/vi/%s as the only default:\n%s", ic.chart, reg.Host, ic.binary, values)
		}
		dir := t.TempDir()
		helm(t, helmBin, helmEnv, "pull", ref, "--version", version, "--ca-file", reg.CAFile, "-d", dir)
		if _, err := os.Stat(filepath.Join(dir, ic.chart+"-"+version+".tgz")); err != nil {
			t.Errorf("helm pull: %v", err)
		}
	}
	t.Logf("helm show chart + show values + pull of 4 charts: %s", time.Since(start).Round(time.Millisecond))

	if _, err := runRelease(ctx, base...); err == nil || !strings.Contains(err.Error(), "already published") {
		t.Fatalf("pushing %s again: %v, want it refused", version, err)
	}
	if out := mustRun(ctx, t, append(base, "--overwrite-prerelease")...); strings.Count(out, "pushed ") != 8 {
		t.Fatalf("replacing the pre-release pushed:\n%s", out)
	}

	// A release proper is never replaced, even when asked.
	final := newReleaseTree(t, root, "0.0.1")
	finalArgs := []string{"--repo", final.dir, "--registry", reg.Host + "/vi", "--version", "0.0.1", "--image", releaseImages, "--ca-file", reg.CAFile}
	mustRun(ctx, t, finalArgs...)
	if _, err := runRelease(ctx, append(finalArgs, "--overwrite-prerelease")...); err == nil || !strings.Contains(err.Error(), "never replaced") {
		t.Fatalf("overwriting release 0.0.1: %v, want it refused", err)
	}

	// Air-gapped: one layout, loaded later into a registry path nothing has been pushed to.
	bundle := filepath.Join(t.TempDir(), "bundle")
	airgap := []string{"--repo", tree.dir, "--registry", reg.Host + "/airgap", "--version", version, "--image", releaseImages, "--oci-layout", bundle}
	if out := mustRun(ctx, t, airgap...); strings.Count(out, "wrote ") != 8 {
		t.Fatalf("bundle:\n%s", out)
	}
	start = time.Now()
	if out := mustRun(ctx, t, "load", "--layout", bundle, "--ca-file", reg.CAFile); strings.Count(out, "pushed ") != 8 {
		t.Fatalf("load:\n%s", out)
	}
	t.Logf("release load of the bundle: %s", time.Since(start).Round(time.Millisecond))
	checkImages(ctx, t, tgt, reg.Host+"/airgap", version, tree.digests)
	values := helm(t, helmBin, helmEnv, "show", "values", "oci://"+reg.Host+"/airgap/charts/ssvirt", "--version", version, "--ca-file", reg.CAFile)
	if !strings.Contains(values, "repository: "+reg.Host+"/airgap/ssvirt-api\n") {
		t.Errorf("loaded ssvirt chart's values do not name the loaded image:\n%s", values)
	}
}

func planRefs(registry, version string) []string {
	p := plan{registry: registry, version: version}
	var refs []string
	for _, f := range strings.Fields(releaseImages) {
		b, c, _ := strings.Cut(f, "=")
		refs = append(refs, p.imageRef(b), p.chartRef(c))
	}
	return refs
}

// checkImages requires each pushed tag to resolve to the digest of the index in its layout.
func checkImages(ctx context.Context, t *testing.T, tgt *target, registry, version string, digests map[string]v1.Hash) {
	t.Helper()
	for binary, want := range digests {
		ref, err := name.ParseReference(registry + "/" + binary + ":" + version)
		if err != nil {
			t.Fatal(err)
		}
		desc, err := remote.Head(ref, append(tgt.opts, remote.WithContext(ctx))...)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if desc.Digest != want || !desc.MediaType.IsIndex() {
			t.Errorf("%s is %s (%s), want the layout's index %s", ref, desc.Digest, desc.MediaType, want)
		}
	}
}

func runRelease(ctx context.Context, args ...string) (string, error) {
	var out bytes.Buffer
	err := run(ctx, args, &out)
	return out.String(), err
}

func mustRun(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, err := runRelease(ctx, args...)
	if err != nil {
		t.Fatalf("release %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// helmHome keeps helm's configuration, cache and registry credentials in the test's own directories.
func helmHome(t *testing.T) []string {
	d := t.TempDir()
	return []string{"HELM_CONFIG_HOME=" + filepath.Join(d, "config"), "HELM_CACHE_HOME=" + filepath.Join(d, "cache"),
		"HELM_DATA_HOME=" + filepath.Join(d, "data"), "HELM_REGISTRY_CONFIG=" + filepath.Join(d, "registry.json"),
		"DOCKER_CONFIG=" + filepath.Join(d, "docker")}
}

func helm(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
