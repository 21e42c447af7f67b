package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// TestPlanRefusesWhatIsNotThisCommit: a dirty tree, a layout built for another version and one built from another
// commit are each refused before anything is packaged or pushed.
func TestPlanRefusesWhatIsNotThisCommit(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	tree := newReleaseTree(t, root, "1.2.3")
	o := options{registry: "registry.example/team", version: "1.2.3", repoRoot: tree.dir, imagesDir: "_output/images",
		chartsDir: "charts", images: tree.pairs}
	p, err := makePlan(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printPlan(&out, p, "would push")
	if !regexp.MustCompile(`would push image +registry\.example/team/ssvirt-api:1\.2\.3 +`+tree.digests["ssvirt-api"].String()).MatchString(out.String()) ||
		!strings.Contains(out.String(), "registry.example/team/charts/ssvirt:1.2.3") {
		t.Errorf("plan:\n%s", out.String())
	}

	o.version = "1.2.4"
	if _, err := makePlan(t.Context(), o); err == nil || !strings.Contains(err.Error(), `built as version "1.2.3"`) {
		t.Errorf("layouts of 1.2.3 released as 1.2.4: %v", err)
	}
	o.version = "1.2"
	if _, err := makePlan(t.Context(), o); err == nil || !strings.Contains(err.Error(), "not a semantic version") {
		t.Errorf("version 1.2: %v", err)
	}
	o.version = "1.2.3"
	// The ssvirt-api layout as another commit's build left it (layout.Write starts a new index.json).
	l, err := layout.Write(filepath.Join(tree.dir, "_output", "images", "ssvirt-api"), emptyIndex())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AppendIndex(testIndex(t, "ssvirt-api", "0123abc"), layout.WithAnnotations(map[string]string{refName: "1.2.3"})); err != nil {
		t.Fatal(err)
	}
	if _, err := makePlan(t.Context(), o); err == nil || !strings.Contains(err.Error(), "was built from commit") {
		t.Errorf("another commit's layouts: %v", err)
	}
	if err := os.WriteFile(filepath.Join(tree.dir, "charts", "ssvirt", "NOTES"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := makePlan(t.Context(), o); err == nil || !strings.Contains(err.Error(), "uncommitted changes") {
		t.Errorf("dirty tree: %v", err)
	}
}

// TestPackageChartFollowsTheRelease: each chart is packaged with the release's version as version and appVersion,
// its values naming the image where this release pushes it, and its comments kept.
func TestPackageChartFollowsTheRelease(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	var ps pairs
	if err := ps.Set(releaseImages); err != nil {
		t.Fatal(err)
	}
	for _, ic := range ps {
		rc, err := packageChart(filepath.Join(root, "charts"), ic.chart, ic.binary, "registry.example:5000/team", "2.0.0-rc.1", true)
		if err != nil {
			t.Fatal(err)
		}
		c, err := loader.LoadArchive(bytes.NewReader(rc.tgz))
		if err != nil {
			t.Fatal(err)
		}
		if c.Metadata.Version != "2.0.0-rc.1" || c.Metadata.AppVersion != "2.0.0-rc.1" {
			t.Errorf("%s: version %s appVersion %s", ic.chart, c.Metadata.Version, c.Metadata.AppVersion)
		}
		if v, ok := c.Metadata.Annotations["artifacthub.io/prerelease"]; ok && v != "true" {
			t.Errorf("%s: artifacthub.io/prerelease %q for a pre-release", ic.chart, v)
		}
		for _, f := range c.Raw {
			if f.Name != "values.yaml" {
				continue
			}
			s := string(f.Data)
			if !strings.Contains(s, "repository: registry.example:5000/team/"+ic.binary+"\n") || strings.Contains(s, defaultRegistry) ||
				!strings.Contains(s, "# -- ") {
				t.Errorf("%s values.yaml does not name registry.example:5000/team/%s (comments kept) as its image", ic.chart, ic.binary)
			}
		}
	}
}
