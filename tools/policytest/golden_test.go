package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func testdataGolden() goldenOptions {
	return goldenOptions{
		chartsDir: "testdata/charts",
		goldenDir: "testdata/golden",
		sync:      syncOptions{chartDir: "testdata/charts/demo", outDir: "testdata/policies/demo"},
	}
}

func TestGoldenPassesOnCommittedFiles(t *testing.T) {
	var out bytes.Buffer
	if err := runGolden(&out, testdataGolden()); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	assertContains(t, out.String(), "PASS  demo/default\n", "PASS  demo/other-label\n",
		"PASS  sync-policies testdata/policies/demo\n", "\n3 passed, 0 failed\n")
}

func TestGoldenDetectsOneCharacterTemplateChange(t *testing.T) {
	o := testdataGolden()
	o.chartsDir = copyDir(t, "testdata/charts")
	replaceInFile(t, filepath.Join(o.chartsDir, "demo/templates/configmap.yaml"), "  greeting:", "  greetinG:")
	o.junitFile = filepath.Join(t.TempDir(), "golden.xml")

	var out bytes.Buffer
	err := runGolden(&out, o)
	if !errors.Is(err, errReported) {
		t.Fatalf("want a failure, got %v\n%s", err, out.String())
	}
	assertContains(t, out.String(),
		"FAIL  demo/default\n",
		"FAIL  demo/other-label\n",
		"--- testdata/golden/demo/default.yaml\n",
		"+++ rendered demo/default\n",
		"-  greeting: \"hello\"\n",
		"+  greetinG: \"hello\"\n",
		"\n1 passed, 2 failed\n",
	)
	tests, failures, suites := junitCounts(t, o.junitFile)
	if tests != 3 || failures != 2 || suites["golden"] != [2]int{2, 2} || suites["sync-policies"] != [2]int{1, 0} {
		t.Errorf("junit: tests=%d failures=%d suites=%v", tests, failures, suites)
	}
}

func TestGoldenMissingFileFailsUnlessUpdated(t *testing.T) {
	o := testdataGolden()
	o.goldenDir = t.TempDir()

	var out bytes.Buffer
	if err := runGolden(&out, o); !errors.Is(err, errReported) {
		t.Fatalf("missing golden files passed: %v\n%s", err, out.String())
	}
	assertContains(t, out.String(), "missing golden file "+filepath.Join(o.goldenDir, "demo/default.yaml"))

	o.update = true
	out.Reset()
	if err := runGolden(&out, o); err != nil {
		t.Fatalf("update failed: %v\n%s", err, out.String())
	}
	for _, name := range []string{"default.yaml", "other-label.yaml"} {
		if got, want := readFile(t, filepath.Join(o.goldenDir, "demo", name)), readFile(t, filepath.Join("testdata/golden/demo", name)); got != want {
			t.Errorf("-update wrote a different %s:\n%s", name, unifiedDiff("committed", "written", want, got))
		}
	}

	o.update = false
	out.Reset()
	if err := runGolden(&out, o); err != nil {
		t.Fatalf("files written by -update do not pass: %v\n%s", err, out.String())
	}
}

func TestGoldenUpdateLeavesUpToDateFilesAlone(t *testing.T) {
	o := testdataGolden()
	o.goldenDir = copyDir(t, "testdata/golden")
	o.update = true
	stale := filepath.Join(o.goldenDir, "demo/other-label.yaml")
	replaceInFile(t, stale, "label owner is required", "label 0wner is required")

	var out bytes.Buffer
	if err := runGolden(&out, o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	assertContains(t, out.String(), "updated "+stale)
	if strings.Contains(out.String(), "updated "+filepath.Join(o.goldenDir, "demo/default.yaml")) {
		t.Errorf("an up-to-date golden file was rewritten:\n%s", out.String())
	}
	if readFile(t, stale) != readFile(t, "testdata/golden/demo/other-label.yaml") {
		t.Error("stale golden file not rewritten")
	}
}

func TestGoldenFailsWhenPoliciesAreStale(t *testing.T) {
	o := testdataGolden()
	o.sync.outDir = copyDir(t, "testdata/policies/demo")
	replaceInFile(t, filepath.Join(o.sync.outDir, "demo-require-label.yaml"), "label team is required", "label team is needed")

	var out bytes.Buffer
	if err := runGolden(&out, o); !errors.Is(err, errReported) {
		t.Fatalf("stale policies passed: %v\n%s", err, out.String())
	}
	assertContains(t, out.String(), "FAIL  sync-policies "+o.sync.outDir, "stale:   "+filepath.Join(o.sync.outDir, "demo-require-label.yaml"))
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
	if want := []string{"demo/default", "demo/other-label"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("cases %v, want %v", ids, want)
	}
	if _, err := discoverCases(t.TempDir()); err == nil {
		t.Error("a directory without charts gave no error")
	}
}

func TestGoStyleLongFlagsWithOneDash(t *testing.T) {
	root := newRootCommand()
	got := goStyleFlags(root, []string{"golden", "-update", "-junit=x.xml", "--charts", "c", "-fvi.yaml", "-f", "--", "-update"})
	want := []string{"golden", "--update", "--junit=x.xml", "--charts", "c", "-fvi.yaml", "-f", "--", "-update"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}

	// End to end through cobra: `golden -update` must parse and write the files.
	goldenDir := t.TempDir()
	root.SetArgs(goStyleFlags(root, []string{"golden", "-update", "--charts", "testdata/charts", "--golden-dir", goldenDir,
		"--policy-chart", "testdata/charts/demo", "--policies-dir", "testdata/policies/demo"}))
	root.SetOut(&bytes.Buffer{})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(goldenDir, "demo/default.yaml")); err != nil {
		t.Errorf("golden -update wrote nothing: %v", err)
	}
}
