package kyverno

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/golden"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/results"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/testfiles"
)

// capturedOutput is `kyverno test -o json --detailed-results --remove-color` of a kyverno-test.yaml holding two
// tests, with a warning line that starts with "[" and a test without results, as kyverno 1.19 prints it.
const capturedOutput = `Loading test  ( policies/x/kyverno-test.yaml ) ...
  Loading values/variables ...
  Loading policies ...
  Warning: policies/x/policy.yaml: kyverno.io/v1 ClusterPolicy is deprecated
[not json] a log line that happens to start with a bracket
  Loading resources ...
  Applying 1 policy to 2 resources with 0 exceptions ...
  Checking results ...

[
  {
    "ID": 1,
    "Message": "validation rule 'check-team' passed.",
    "POLICY": "require-team-label",
    "REASON": "Ok",
    "RESOURCE": "v1/ConfigMap/apps/labeled",
    "RESULT": "Pass",
    "RULE": "check-team"
  },
  {
    "ID": 2,
    "Message": "validation error: label team is required. rule check-team failed at path /metadata/labels/",
    "POLICY": "require-team-label",
    "REASON": "Want pass, got fail",
    "RESOURCE": "v1/ConfigMap/apps/unlabeled",
    "RESULT": "Fail",
    "RULE": "check-team"
  }
]

Loading test  ( policies/x/kyverno-test.yaml ) ...
  Checking results ...

[]

Loading test  ( policies/x/kyverno-test.yaml ) ...
  Checking results ...

[
  {
    "ID": 1,
    "Message": "policy is invalid",
    "POLICY": "broken",
    "REASON": "Invalid Policy",
    "RESOURCE": "v1/Pod/default/p",
    "RESULT": "Skip",
    "RULE": "r"
  }
]


Test Summary: 1 tests passed and 1 tests failed

`

func TestParseKyvernoRowsFindsEveryArray(t *testing.T) {
	rows := parseKyvernoRows(capturedOutput)
	if len(rows) != 3 {
		t.Fatalf("got %d rows, want 3: %+v", len(rows), rows)
	}
	if r := rows[1]; r.Policy != "require-team-label" || r.Rule != "check-team" || r.Resource != "v1/ConfigMap/apps/unlabeled" ||
		r.Reason != "Want pass, got fail" || !strings.HasPrefix(r.Message, "validation error:") || !r.failed() {
		t.Errorf("row 2 misparsed: %+v", r)
	}
	if rows[0].failed() {
		t.Error("a Pass row counts as failed")
	}
	if !rows[2].failed() {
		t.Error("a skipped invalid policy counts as passed")
	}
	if got := parseKyvernoRows("no arrays\n[1, 2]\n[{\"x\": 1}]\n"); len(got) != 0 {
		t.Errorf("arrays that are not result tables parsed as rows: %+v", got)
	}
}

func TestKyvernoRunsTheSuiteInProcess(t *testing.T) {
	var out bytes.Buffer
	junitFile := filepath.Join(t.TempDir(), "kyverno.xml")
	if err := runKyverno(&out, []string{"testdata/kyverno"}, junitFile); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := "PASS  testdata/kyverno/require-label  require-team-label/check-team  v1/ConfigMap/apps/labeled\n" +
		"PASS  testdata/kyverno/require-label  require-team-label/check-team  v1/ConfigMap/apps/unlabeled\n" +
		"2 passed, 0 failed\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	tests, failures, suites := testfiles.JUnitCounts(t, junitFile)
	if tests != 2 || failures != 0 || suites["testdata/kyverno/require-label"] != [2]int{2, 0} {
		t.Errorf("junit: tests=%d failures=%d suites=%v", tests, failures, suites)
	}
}

func TestKyvernoReportsAFailingResult(t *testing.T) {
	dir := testfiles.CopyDir(t, "testdata/kyverno")
	// The unlabeled ConfigMap fails the policy; expecting a pass must make its row fail.
	testfiles.ReplaceInFile(t, filepath.Join(dir, "require-label/kyverno-test.yaml"), "result: fail", "result: pass")

	var out bytes.Buffer
	junitFile := filepath.Join(t.TempDir(), "kyverno.xml")
	if err := runKyverno(&out, []string{dir}, junitFile); !errors.Is(err, results.ErrReported) {
		t.Fatalf("want a failure, got %v\n%s", err, out.String())
	}
	suite := filepath.Join(dir, "require-label")
	testfiles.AssertContains(t, out.String(),
		"PASS  "+suite+"  require-team-label/check-team  v1/ConfigMap/apps/labeled\n",
		"FAIL  "+suite+"  require-team-label/check-team  v1/ConfigMap/apps/unlabeled\n",
		"Fail: Want pass, got fail\n",
		"validation error: label team is required",
		"\n1 passed, 1 failed\n")
	tests, failures, suites := testfiles.JUnitCounts(t, junitFile)
	if tests != 2 || failures != 1 || suites[suite] != [2]int{2, 1} {
		t.Errorf("junit: tests=%d failures=%d suites=%v", tests, failures, suites)
	}
}

func TestKyvernoFailsOnZeroResultsAndOnCommandErrors(t *testing.T) {
	for name, c := range map[string]struct {
		edit func(t *testing.T, testFile string)
		want string
	}{
		"no results": {
			edit: func(t *testing.T, testFile string) {
				content := testfiles.ReadFile(t, testFile)
				testfiles.WriteFile(t, testFile, content[:strings.Index(content, "results:")]+"results: []\n")
			},
			want: "no results",
		},
		"missing policy": {
			edit: func(t *testing.T, testFile string) {
				testfiles.ReplaceInFile(t, testFile, "- policy.yaml", "- no-such-policy.yaml")
			},
			want: "kyverno test failed",
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := testfiles.CopyDir(t, "testdata/kyverno")
			c.edit(t, filepath.Join(dir, "require-label/kyverno-test.yaml"))
			var out bytes.Buffer
			err := runKyverno(&out, []string{dir}, "")
			if !errors.Is(err, results.ErrReported) {
				t.Fatalf("want a failure, got %v\n%s", err, out.String())
			}
			testfiles.AssertContains(t, out.String(), "FAIL  "+filepath.Join(dir, "require-label")+"  kyverno test\n", c.want, "0 passed, 1 failed\n")
		})
	}
}

func TestKyvernoNeedsSuitesAndRefusesNestedOnes(t *testing.T) {
	if err := runKyverno(&bytes.Buffer{}, []string{t.TempDir()}, ""); err == nil || !strings.Contains(err.Error(), "no kyverno-test.yaml") {
		t.Errorf("empty directory: %v", err)
	}
	if err := runKyverno(&bytes.Buffer{}, []string{filepath.Join(t.TempDir(), "missing")}, ""); err == nil {
		t.Error("missing directory gave no error")
	}
	dir := testfiles.CopyDir(t, "testdata/kyverno")
	testfiles.WriteFile(t, filepath.Join(dir, "require-label/inner/kyverno-test.yaml"), "kind: Test\n")
	if _, err := discoverSuites([]string{dir}); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Errorf("nested suite: %v", err)
	}
}

// TestExpectedRows: one row per resource of each result, so that a suite printing fewer (a policy that failed to
// apply to some resources) is caught.
func TestExpectedRows(t *testing.T) {
	dir := t.TempDir()
	suite := `results:
- policy: p
  resources: [ns/a, ns/b]
- policy: p
  resources: [ns/c]
- policy: q
`
	if err := os.WriteFile(filepath.Join(dir, golden.KyvernoTestFile), []byte(suite), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := expectedRows(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got != 4 {
		t.Errorf("expectedRows = %d, want 4", got)
	}
	if _, err := expectedRows(t.TempDir()); err == nil {
		t.Error("a directory without a suite gave no error")
	}
}
