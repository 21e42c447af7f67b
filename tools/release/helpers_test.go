package main

import (
	"context"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// releaseImages is the Makefile's IMAGES.
var releaseImages = "virtualservice-operator=virtualservice-operator virtual-ingress-controller=virtual-ingress " +
	"apps-ingress-operator=apps-ingress-operator ssvirt-api=ssvirt"

func emptyIndex() v1.ImageIndex { return empty.Index }

// testIndex is an OCI index of two small images for linux/amd64 and linux/arm64, labelled with revision as
// tools/images labels its images.
func testIndex(t *testing.T, binary, revision string) v1.ImageIndex {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := random.Image(512, 1)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = "linux", arch
		cf.Config.Labels = map[string]string{"org.opencontainers.image.title": binary, "org.opencontainers.image.revision": revision}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			t.Fatal(err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
		})
	}
	return idx
}

// releaseTree is a committed copy of the repository's charts with the layouts `make images` would write for its
// commit (small random images: the release handles any index, and building the four binaries twice each would
// dominate the test).
type releaseTree struct {
	dir     string
	pairs   pairs
	digests map[string]v1.Hash
}

func newReleaseTree(t *testing.T, root, version string) releaseTree {
	t.Helper()
	dir := t.TempDir()
	revision, err := repo.CommitCharts(context.Background(), root, dir, "charts")
	if err != nil {
		t.Fatal(err)
	}
	tree := releaseTree{dir: dir, digests: map[string]v1.Hash{}}
	if err := tree.pairs.Set(releaseImages); err != nil {
		t.Fatal(err)
	}
	for _, ic := range tree.pairs {
		idx := testIndex(t, ic.binary, revision)
		l, err := layout.Write(filepath.Join(dir, "_output", "images", ic.binary), emptyIndex())
		if err != nil {
			t.Fatal(err)
		}
		if err := l.AppendIndex(idx, layout.WithAnnotations(map[string]string{refName: version})); err != nil {
			t.Fatal(err)
		}
		if tree.digests[ic.binary], err = idx.Digest(); err != nil {
			t.Fatal(err)
		}
	}
	return tree
}

// makefileImages reads the Makefile's IMAGES.
func makefileImages(t *testing.T, root string) pairs {
	t.Helper()
	images, err := repo.Images(root)
	if err != nil {
		t.Fatal(err)
	}
	var p pairs
	if err := p.Set(images); err != nil {
		t.Fatal(err)
	}
	return p
}
