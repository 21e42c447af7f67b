package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
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

// TestPackPrebuiltBinary packs a binary built beforehand: its bytes are the image's entrypoint, the same binary gives
// the same digest, and more than one platform is refused (one binary runs on one).
func TestPackPrebuiltBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "prebuilt")
	content := []byte("#!/not/a/real/binary\n")
	if err := os.WriteFile(bin, content, 0o755); err != nil {
		t.Fatal(err)
	}
	o := options{binary: bin, name: "hello", version: "test", platforms: []string{"linux/amd64"}, out: filepath.Join(dir, "a")}
	first, err := build(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.out = filepath.Join(dir, "b")
	second, err := build(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if first.index != second.index {
		t.Errorf("index digest %s then %s: packing the same binary is not reproducible", first.index, second.index)
	}
	if len(second.images) != 1 || second.images[0].size != int64(len(content)) {
		t.Errorf("images %+v, want one of %d bytes", second.images, len(content))
	}
	top, err := layout.ImageIndexFromPath(o.out)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := top.ImageIndex(second.index)
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(second.images[0].digest)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %v %v", layers, err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("no usr/local/bin/hello in the layer: %v", err)
		}
		if h.Name == "usr/local/bin/hello" {
			got, _ := io.ReadAll(tr)
			if !bytes.Equal(got, content) {
				t.Errorf("entrypoint holds %q, want the prebuilt binary's %q", got, content)
			}
			break
		}
	}

	o.platforms = []string{"linux/amd64", "linux/arm64"}
	if _, err := build(t.Context(), o); err == nil {
		t.Error("a prebuilt binary packed for two platforms: want an error")
	}
}
