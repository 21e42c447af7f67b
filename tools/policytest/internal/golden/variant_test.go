package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/testfiles"
)

// A policy for the second kind is committed as its diff from the first kind's, written whole as a scratch file,
// checked through its diff, and named by golden through the whole file's path.
func TestSyncCommitsAVariantPolicyAsItsDiffFromItsBase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "policies")
	testfiles.WriteFile(t, filepath.Join(dir, "clusterpolicy", suiteValuesFile),
		testfiles.ReadFile(t, filepath.Join(testfiles.RepoRoot, "policies/virtual-ingress/clusterpolicy", suiteValuesFile)))
	o := SyncOptions{chartDir: testfiles.RealChart, outDir: dir, variantSuffix: "-routes"}
	if err := writeSync(&bytes.Buffer{}, o); err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(dir, "clusterpolicy/virtual-ingress-resolve-routes.yaml")
	diff := filepath.Join(dir, "clusterpolicy/virtual-ingress-resolve-routes.diff")
	if !isScratch([]byte(testfiles.ReadFile(t, whole))) {
		t.Errorf("%s is not a scratch file", whole)
	}
	d := testfiles.ReadFile(t, diff)
	if !isGenerated([]byte(d)) || isScratch([]byte(d)) {
		t.Errorf("%s is not a committed generated file:\n%s", diff, d)
	}
	testfiles.AssertContains(t, d, "--- virtual-ingress-resolve.yaml\n+++ virtual-ingress-resolve-routes.yaml\n",
		"-  name: virtual-ingress-resolve\n+  name: virtual-ingress-resolve-routes\n")
	if lines, whole := strings.Count(d, "\n"), strings.Count(testfiles.ReadFile(t, whole), "\n"); lines*2 > whole {
		t.Errorf("the diff (%d lines) is not much smaller than the policy (%d lines)", lines, whole)
	}
	if ok, out := checkSync(t, o); !ok {
		t.Errorf("check fails right after a sync:\n%s", out)
	}

	bodies, err := generatedBodies(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := planSync(o)
	if err != nil {
		t.Fatal(err)
	}
	addVariantBodies(bodies, plan)
	_, body, _ := strings.Cut(testfiles.ReadFile(t, whole), "\n")
	if got := bodies[body]; !strings.HasPrefix(got, filepath.ToSlash(whole)+", committed as its diff ") {
		t.Errorf("golden names the variant %q", got)
	}

	testfiles.ReplaceInFile(t, diff, "+  name: virtual-ingress-resolve-routes\n", "+  name: virtual-ingress-resolve-route\n")
	if ok, out := checkSync(t, o); ok || !strings.Contains(out, "stale:   "+diff) {
		t.Errorf("hand-edited diff not reported:\n%s", out)
	}
	if err := os.Remove(whole); err != nil {
		t.Fatal(err)
	}
	if ok, out := checkSync(t, o); ok || strings.Contains(out, whole) {
		t.Errorf("the missing scratch file counts in the check, or the stale diff no longer does:\n%s", out)
	}
}
