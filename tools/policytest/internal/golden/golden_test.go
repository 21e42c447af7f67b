package golden

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/results"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/testfiles"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/textdiff"
)

func testdataGolden() goldenOptions {
	return goldenOptions{
		chartsDir: "testdata/charts",
		testsDir:  "testdata/tests",
		sync:      SyncOptions{chartDir: "testdata/charts/demo", outDir: "testdata/policies/demo"},
	}
}

const (
	demoDefault = "testdata/tests/demo/golden/default.yaml"
	demoCustom  = "testdata/tests/demo/golden/custom.diff"
)

// testdataGoldenWithChartCopy renders a copy of the test chart, which the test may change. sync-policies still
// renders the committed chart: the header of its files names the chart's path.
func testdataGoldenWithChartCopy(t *testing.T) goldenOptions {
	o := testdataGolden()
	o.chartsDir = testfiles.CopyDir(t, "testdata/charts")
	return o
}

// runGoldenFails runs golden and wants it to fail.
func runGoldenFails(t *testing.T, o goldenOptions) string {
	t.Helper()
	var out bytes.Buffer
	if err := runGolden(&out, o); !errors.Is(err, results.ErrReported) {
		t.Fatalf("want a failure, got %v\n%s", err, out.String())
	}
	return out.String()
}

func TestGoldenPassesOnCommittedFiles(t *testing.T) {
	var out bytes.Buffer
	if err := runGolden(&out, testdataGolden()); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	testfiles.AssertContains(t, out.String(), "PASS  demo/default\n", "PASS  demo/custom\n",
		"PASS  sync-policies testdata/policies/demo\n", "\n3 passed, 0 failed\n")
}

// The default golden file names what it does not repeat: the CRD, and the policy identical to its policies/ copy.
// A ci case's golden file is a diff without context lines; where the case renders the policy differently, both sides
// show it in full, so the diff holds its changed lines, each hunk headed by the document it changes.
func TestGoldenFilesHoldOnlyWhatNoOtherFileHolds(t *testing.T) {
	def := testfiles.ReadFile(t, demoDefault)
	testfiles.AssertContains(t, def,
		"---\n# Source: demo/crds/widgets.demo.example.io.yaml (CRD file, installed as it is: not repeated here)\n---\n",
		"---\n# Source: demo/templates/clusterpolicy.yaml (rendered as testdata/policies/demo/demo-require-label.yaml)\n")
	for _, repeated := range []string{"CustomResourceDefinition", "ClusterPolicy"} {
		if strings.Contains(def, repeated) {
			t.Errorf("%s repeats a %s:\n%s", demoDefault, repeated, def)
		}
	}
	testfiles.AssertContains(t, testfiles.ReadFile(t, demoCustom), "--- default.yaml\n+++ ci/custom-values.yaml\n",
		"-  greeting: \"hello\"\n+  greeting: \"hi\"\n+  farewell: \"bye\"\n",
		"@@ -34 +35 @@ ClusterPolicy demo-require-label demo/templates/clusterpolicy.yaml\n-            team: \"?*\"\n+            owner: \"?*\"\n")
}

// The farewell line renders only with ci/custom-values.yaml: the change reaches no golden file but custom.diff.
func TestGoldenDetectsOneCharacterChangeOnlyACaseRenders(t *testing.T) {
	o := testdataGoldenWithChartCopy(t)
	testfiles.ReplaceInFile(t, filepath.Join(o.chartsDir, "demo/templates/configmap.yaml"), "  farewell:", "  fareweLl:")
	o.junitFile = filepath.Join(t.TempDir(), "golden.xml")

	out := runGoldenFails(t, o)
	testfiles.AssertContains(t, out,
		"PASS  demo/default\n",
		"FAIL  demo/custom\n",
		"render differs from "+demoCustom+"\n",
		"--- "+demoCustom+"\n",
		"+++ rendered demo/custom\n",
		"-+  farewell: \"bye\"\n",
		"++  fareweLl: \"bye\"\n",
		"\n2 passed, 1 failed\n",
	)
	tests, failures, suites := testfiles.JUnitCounts(t, o.junitFile)
	if tests != 3 || failures != 1 || suites["golden"] != [2]int{2, 1} || suites["sync-policies"] != [2]int{1, 0} {
		t.Errorf("junit: tests=%d failures=%d suites=%v", tests, failures, suites)
	}
}

// ci/custom-values.yaml sets the greeting: a change to its default changes the default render only. default.yaml
// holds that render whole, so it fails there (custom.diff fails too, only because the line is in its context).
func TestGoldenDetectsOneCharacterChangeOnlyTheDefaultRenders(t *testing.T) {
	o := testdataGoldenWithChartCopy(t)
	testfiles.ReplaceInFile(t, filepath.Join(o.chartsDir, "demo/values.yaml"), "greeting: hello", "greeting: hellO")

	out := runGoldenFails(t, o)
	testfiles.AssertContains(t, out,
		"FAIL  demo/default\n",
		"render differs from "+demoDefault+"\n",
		"-  greeting: \"hello\"\n",
		"+  greeting: \"hellO\"\n",
		"PASS  sync-policies testdata/policies/demo\n",
	)
}

// A policy template change leaves policies/ stale: the render no longer matches the committed file, so the golden
// file shows the policy whole instead of naming the file, and fails (as sync's own check does, which the sync tests
// cover).
func TestGoldenDetectsOneCharacterPolicyTemplateChange(t *testing.T) {
	o := testdataGoldenWithChartCopy(t)
	testfiles.ReplaceInFile(t, filepath.Join(o.chartsDir, "demo/templates/clusterpolicy.yaml"), "is required", "is requireD")

	out := runGoldenFails(t, o)
	testfiles.AssertContains(t, out,
		"FAIL  demo/default\n",
		"-# Source: demo/templates/clusterpolicy.yaml (rendered as testdata/policies/demo/demo-require-label.yaml)\n",
		"+# Source: demo/templates/clusterpolicy.yaml\n",
		"+      message: \"label team is requireD\"\n",
		"FAIL  demo/custom\n",
	)
}

// A CRD is not a template: Helm installs the file of crds/ as it is, so the file is its own golden copy and a
// change to its content is not a change of the render to review twice (the crdschema tests and e2e suites check
// what it does). Whether the chart ships it is part of the render.
func TestGoldenNamesCRDsWithoutComparingTheirContent(t *testing.T) {
	o := testdataGoldenWithChartCopy(t)
	crd := filepath.Join(o.chartsDir, "demo/crds/widgets.demo.example.io.yaml")
	testfiles.ReplaceInFile(t, crd, "kind: Widget", "kind: WidgeT")
	var out bytes.Buffer
	if err := runGolden(&out, o); err != nil {
		t.Fatalf("a CRD content change failed golden: %v\n%s", err, out.String())
	}

	if err := os.Remove(crd); err != nil {
		t.Fatal(err)
	}
	testfiles.AssertContains(t, runGoldenFails(t, o), "FAIL  demo/default\n",
		"-# Source: demo/crds/widgets.demo.example.io.yaml (CRD file, installed as it is: not repeated here)\n")
}

func TestGoldenMissingFileFailsUnlessUpdated(t *testing.T) {
	o := testdataGolden()
	o.testsDir = t.TempDir()

	out := runGoldenFails(t, o)
	testfiles.AssertContains(t, out, "missing golden file "+filepath.Join(o.testsDir, "demo/golden/default.yaml"),
		"missing golden file "+filepath.Join(o.testsDir, "demo/golden/custom.diff"))

	o.update = true
	var update bytes.Buffer
	if err := runGolden(&update, o); err != nil {
		t.Fatalf("update failed: %v\n%s", err, update.String())
	}
	for _, name := range []string{"default.yaml", "custom.diff"} {
		got, want := testfiles.ReadFile(t, filepath.Join(o.testsDir, "demo/golden", name)), testfiles.ReadFile(t, filepath.Join("testdata/tests/demo/golden", name))
		if got != want {
			t.Errorf("-update wrote a different %s:\n%s", name, textdiff.Unified("committed", "written", want, got))
		}
	}

	o.update = false
	var again bytes.Buffer
	if err := runGolden(&again, o); err != nil {
		t.Fatalf("files written by -update do not pass: %v\n%s", err, again.String())
	}
}

func TestGoldenUpdateLeavesUpToDateFilesAlone(t *testing.T) {
	o := testdataGolden()
	o.testsDir = testfiles.CopyDir(t, "testdata/tests")
	o.update = true
	stale := filepath.Join(o.testsDir, "demo/golden/custom.diff")
	testfiles.ReplaceInFile(t, stale, "label owner is required", "label 0wner is required")

	var out bytes.Buffer
	if err := runGolden(&out, o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	testfiles.AssertContains(t, out.String(), "updated "+stale)
	if strings.Contains(out.String(), "updated "+filepath.Join(o.testsDir, "demo/golden/default.yaml")) {
		t.Errorf("an up-to-date golden file was rewritten:\n%s", out.String())
	}
	if testfiles.ReadFile(t, stale) != testfiles.ReadFile(t, demoCustom) {
		t.Error("stale golden file not rewritten")
	}
}

// A case rendering as the defaults keeps a golden file (an empty diff), so that it cannot vanish unnoticed; and a
// golden file whose case is gone fails until --update deletes it.
func TestGoldenKeepsEmptyDiffsAndFailsOnGoldenFilesWithoutCase(t *testing.T) {
	o := testdataGoldenWithChartCopy(t)
	o.testsDir = testfiles.CopyDir(t, "testdata/tests")
	testfiles.WriteFile(t, filepath.Join(o.chartsDir, "demo/ci/same-values.yaml"), "greeting: hello\n")
	same := filepath.Join(o.testsDir, "demo/golden/same.diff")

	testfiles.AssertContains(t, runGoldenFails(t, o), "FAIL  demo/same\n", "missing golden file "+same)
	o.update = true
	if err := runGolden(&bytes.Buffer{}, o); err != nil {
		t.Fatal(err)
	}
	want := "# Golden file of chart demo, case ci/same-values.yaml (see policytest golden --help). Empty: renders as its base.\n"
	if got := testfiles.ReadFile(t, same); got != want {
		t.Errorf("same.diff:\n%s\nwant:\n%s", got, want)
	}
	o.update = false
	var out bytes.Buffer
	if err := runGolden(&out, o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}

	if err := os.Remove(filepath.Join(o.chartsDir, "demo/ci/same-values.yaml")); err != nil {
		t.Fatal(err)
	}
	testfiles.AssertContains(t, runGoldenFails(t, o), "FAIL  demo/same.diff\n", "golden file without a case: "+same)
	o.update = true
	out.Reset()
	if err := runGolden(&out, o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	testfiles.AssertContains(t, out.String(), "deleted "+same)
	if fileExists(same) {
		t.Error("golden file of a gone case not deleted")
	}
}

func TestGoldenFailsWhenPoliciesAreStale(t *testing.T) {
	o := testdataGolden()
	o.sync.outDir = testfiles.CopyDir(t, "testdata/policies/demo")
	testfiles.ReplaceInFile(t, filepath.Join(o.sync.outDir, "demo-require-label.yaml"), "label team is required", "label team is needed")

	out := runGoldenFails(t, o)
	testfiles.AssertContains(t, out, "FAIL  sync-policies "+o.sync.outDir, "stale:   "+filepath.Join(o.sync.outDir, "demo-require-label.yaml"),
		// The render no longer matches the stale file: default.yaml shows it whole.
		"FAIL  demo/default\n", "+# Source: demo/templates/clusterpolicy.yaml\n")
}

func TestGoldenDirIsNamedAfterTheProduct(t *testing.T) {
	for chart, want := range map[string]string{
		"virtual-ingress":         "tests/virtualingress/golden",
		"virtualservice-operator": "tests/virtualservice/golden",
		"apps-ingress-operator":   "tests/appsingress/golden",
		"ssvirt":                  "tests/ssvirt/golden",
	} {
		if got := filepath.ToSlash(goldenDir("tests", chart)); got != want {
			t.Errorf("%s: %s, want %s", chart, got, want)
		}
	}
}

func TestDiscoverCasesNamesCasesAfterCIValuesFiles(t *testing.T) {
	cases, err := discoverCases("testdata/charts")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cases {
		ids = append(ids, c.ID())
	}
	if want := []string{"demo/default", "demo/custom"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("cases %v, want %v", ids, want)
	}
	if _, err := discoverCases(t.TempDir()); err == nil {
		t.Error("a directory without charts gave no error")
	}
}

// A case named <other>-<more> refines the case <other>: its golden file shows only what it changes beyond <other>.
func TestGoldenDiffsARefiningCaseFromTheCaseItRefines(t *testing.T) {
	o := updateGoldenWithChartFile(t, "demo/ci/custom-polite-values.yaml", "greeting: hi\nfarewell: goodbye\nrequiredLabel: owner\n")
	got := testfiles.ReadFile(t, filepath.Join(o.testsDir, "demo/golden/custom-polite.diff"))
	want := "--- ci/custom-values.yaml\n+++ ci/custom-polite-values.yaml\n" +
		"@@ -12 +12 @@ ConfigMap demo-settings demo/templates/configmap.yaml\n" +
		"-  farewell: \"bye\"\n+  farewell: \"goodbye\"\n"
	if _, body, _ := strings.Cut(got, "Empty: renders as its base.\n"); body != want {
		t.Errorf("custom-polite.diff:\n%s\nwant its diff to be:\n%s", got, want)
	}
}

// An object the case does not render is one removed line naming it: its text is in the base's golden file already.
func TestGoldenNamesAnObjectACaseDropsInOneLine(t *testing.T) {
	o := updateGoldenWithChartFile(t, "demo/templates/greeter.yaml",
		"{{- if eq .Values.greeting \"hello\" }}\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: greeter\n  labels:\n    greets: \"yes\"\n{{- end }}\n")
	got := testfiles.ReadFile(t, filepath.Join(o.testsDir, "demo/golden/custom.diff"))
	testfiles.AssertContains(t, got, "-# Source: demo/templates/greeter.yaml (ServiceAccount greeter: not rendered)\n")
	if strings.Contains(got, "greets") {
		t.Errorf("the dropped object's text is repeated:\n%s", got)
	}
	testfiles.AssertContains(t, testfiles.ReadFile(t, filepath.Join(o.testsDir, "demo/golden/default.yaml")), "    greets: \"yes\"\n")
}

// updateGoldenWithChartFile adds a file to a copy of the test chart and writes its golden files into a copy of the
// test's golden directory, whose options it returns.
func updateGoldenWithChartFile(t *testing.T, file, content string) goldenOptions {
	t.Helper()
	o := testdataGoldenWithChartCopy(t)
	o.testsDir = testfiles.CopyDir(t, "testdata/tests")
	testfiles.WriteFile(t, filepath.Join(o.chartsDir, file), content)
	o.update = true
	if err := runGolden(&bytes.Buffer{}, o); err != nil {
		t.Fatal(err)
	}
	return o
}
