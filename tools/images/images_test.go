package main

import (
	"archive/tar"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// TestBuildBothArchitectures packs a tiny binary for linux/amd64 and linux/arm64 twice and checks the layout: an
// index with one image per platform, non-root, the binary as entrypoint, and the same digest both times.
func TestBuildBothArchitectures(t *testing.T) {
	o := options{
		pkg: "./testdata/hello", name: "hello", version: "test", revision: "abc",
		platforms: []string{"linux/amd64", "linux/arm64"},
	}
	o.out = filepath.Join(t.TempDir(), "a")
	first, err := build(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.out = filepath.Join(t.TempDir(), "b")
	second, err := build(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if first.index != second.index {
		t.Errorf("index digest %s then %s: the build is not reproducible", first.index, second.index)
	}

	top, err := layout.ImageIndexFromPath(o.out)
	if err != nil {
		t.Fatal(err)
	}
	topManifest, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(topManifest.Manifests) != 1 || topManifest.Manifests[0].Digest != second.index ||
		topManifest.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "test" {
		t.Fatalf("layout index.json %+v, want the image index %s named test", topManifest.Manifests, second.index)
	}
	idx, err := top.ImageIndex(second.index)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 {
		t.Fatalf("%d manifests, want 2", len(im.Manifests))
	}
	for i, want := range []string{"amd64", "arm64"} {
		d := im.Manifests[i]
		if d.Platform == nil || d.Platform.OS != "linux" || d.Platform.Architecture != want {
			t.Errorf("manifest %d platform %+v, want linux/%s", i, d.Platform, want)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != want || cf.OS != "linux" || cf.Config.User != "65532:65532" ||
			len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/usr/local/bin/hello" || cf.Config.WorkingDir != "/" {
			t.Errorf("%s config: arch %s user %q entrypoint %q workdir %q", want, cf.Architecture, cf.Config.User, cf.Config.Entrypoint, cf.Config.WorkingDir)
		}
		if cf.Config.Labels["org.opencontainers.image.revision"] != "abc" {
			t.Errorf("labels %v", cf.Config.Labels)
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("layers %v %v", layers, err)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		checkBinary(t, rc)
	}
}

func checkBinary(t *testing.T, rc io.ReadCloser) {
	t.Helper()
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatal("no usr/local/bin/hello in the layer")
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "usr/local/bin/hello" {
			if h.Mode != 0o755 || h.Uid != 0 || h.Size == 0 {
				t.Errorf("binary mode %o uid %d size %d", h.Mode, h.Uid, h.Size)
			}
			return
		}
	}
}
