package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// upstreamImages are the images the charts run that this project does not build, each documented in its chart's
// values.yaml: CoreDNS and HAProxy (apps-ingress-operator) and curl (every chart's `helm test` Pod).
var upstreamImages = []string{"docker.io/coredns/coredns", "docker.io/library/haproxy", "docker.io/curlimages/curl"}

// pinnedTag is a version tag (MAJOR.MINOR[.PATCH]): never latest, never empty.
var pinnedTag = regexp.MustCompile(`^\d+\.\d+(\.\d+)?$`)

// TestDefaultImagesArePublished renders every chart with its defaults (and each ci/ values file, which turns on
// what the defaults leave off) and requires every image a Pod names to be one a default `make release` of the
// chart's version pushes (ghcr.io/virtual-ingress/<binary>:<appVersion>), or a documented upstream image with a
// pinned tag: no default points nowhere.
func TestDefaultImagesArePublished(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, ic := range makefileImages(t, root) {
		chartDir := filepath.Join(root, "charts", ic.chart)
		c, err := loader.Load(chartDir)
		if err != nil {
			t.Fatal(err)
		}
		released := defaultRegistry + "/" + ic.binary + ":" + c.Metadata.AppVersion
		cases, err := render.Cases(chartDir)
		if err != nil {
			t.Fatal(err)
		}
		seenReleased := false
		for name, files := range cases {
			docs, err := render.Render(chartDir, files, nil)
			if err != nil {
				t.Fatalf("%s %s: %v", ic.chart, name, err)
			}
			for _, ctr := range render.Containers(docs) {
				if ctr.Image == released {
					seenReleased = true
					continue
				}
				if name == "default" || !strings.HasPrefix(ctr.Image, defaultRegistry+"/") {
					if err := checkUpstream(ctr.Image); err != nil {
						t.Errorf("%s (%s values): %s: %v; want %s or a pinned upstream image", ic.chart, name, ctr, err, released)
					}
				}
			}
		}
		if !seenReleased {
			t.Errorf("%s: no Pod runs %s, the image `make release` pushes for it", ic.chart, released)
		}
	}
}

// checkUpstream accepts repository:tag for a listed upstream repository and a pinned tag.
func checkUpstream(image string) error {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return fmt.Errorf("no tag")
	}
	repository, tag := image[:i], image[i+1:]
	if !slices.Contains(upstreamImages, repository) {
		return fmt.Errorf("%s is neither pushed by `make release` nor a documented upstream image", repository)
	}
	if !pinnedTag.MatchString(tag) {
		return fmt.Errorf("tag %q is not a version", tag)
	}
	return nil
}

// TestMakefileImagesAreTheTestedOnes keeps the release tests' list of images the Makefile's IMAGES.
func TestMakefileImagesAreTheTestedOnes(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	var tested pairs
	if err := tested.Set(releaseImages); err != nil {
		t.Fatal(err)
	}
	got := makefileImages(t, root)
	key := func(p pairs) []string {
		var s []string
		for _, ic := range p {
			s = append(s, ic.binary+"="+ic.chart)
		}
		sort.Strings(s)
		return s
	}
	if !slices.Equal(key(got), key(tested)) {
		t.Fatalf("Makefile IMAGES %v, the tests release %v", key(got), key(tested))
	}
}
