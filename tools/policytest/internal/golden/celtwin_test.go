package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/testfiles"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/textdiff"
)

const clusterPolicySuite = `# The ClusterPolicy suite's description of itself.
apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata:
  name: demo
policies:
- ../gen.yaml
- ../mut.yaml
resources:
- vi.yaml
results:
# Generated.
- policy: gen
  rule: generate-ingress
  kind: VirtualIngress
  resources: [ns/a]
  generatedResource: expected-a.yaml
  result: pass
# Not resolved: nothing generated.
- policy: gen
  rule: generate-ingress
  kind: VirtualIngress
  resources: [ns/b]
  result: skip
- rule: resolve
  policy: mut
  resources: [ns/a]
  patchedResources: patched-a.yaml
  result: pass
`

var celPolicies = map[string]renderedPolicy{"gen": {kind: "GeneratingPolicy"}, "mut": {kind: "MutatingPolicy"}}

func TestCELTwinNamesTheCELPoliciesAndTurnsAGenerateSkipIntoACheckedPass(t *testing.T) {
	got, err := celTwin([]byte(clusterPolicySuite), "# header", celPolicies)
	if err != nil {
		t.Fatal(err)
	}
	want := `# header
apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata:
  name: demo-cel
policies:
- ../gen.yaml
- ../mut.yaml
resources:
- vi.yaml
results:
# Generated.
- policy: gen
  isGeneratingPolicy: true
  kind: VirtualIngress
  resources: [ns/a]
  generatedResource: expected-a.yaml
  result: pass
# Not resolved: nothing generated.
- policy: gen
  isGeneratingPolicy: true
  kind: VirtualIngress
  resources: [ns/b]
  generatedResource: expected-a.yaml
  result: pass
- isMutatingPolicy: true
  policy: mut
  resources: [ns/a]
  patchedResources: patched-a.yaml
  result: pass
`
	if string(got) != want {
		t.Errorf("twin:\n%s", textdiff.Unified("want", "got", want, string(got)))
	}
}

func TestCELTwinRefusesWhatItCannotTranslate(t *testing.T) {
	for _, c := range []struct {
		name, from, to string
		policies       map[string]renderedPolicy
		want           string
	}{
		{"a skip with nothing to compare", "  generatedResource: expected-a.yaml\n", "", celPolicies, "needs another result of that policy naming a generatedResource"},
		{"a policy the CEL engine lacks", "", "", map[string]renderedPolicy{"gen": {kind: "GeneratingPolicy"}}, `the CEL engine renders no policy "mut"`},
		{"a policy that is no CEL policy", "", "", map[string]renderedPolicy{"gen": {kind: "GeneratingPolicy"}, "mut": {kind: "ClusterPolicy"}}, "mut is a ClusterPolicy, not a CEL policy"},
		{"a result without rule", "- rule: resolve\n  policy: mut\n", "- policy: mut\n", celPolicies, "result 3 has no rule to replace with isMutatingPolicy"},
		{"a layout the lines cannot be edited in", "- rule: resolve\n  policy: mut\n  resources: [ns/a]\n  patchedResources: patched-a.yaml\n  result: pass\n",
			"- {rule: resolve, policy: mut, resources: [ns/a], patchedResources: patched-a.yaml, result: pass}\n", celPolicies, "is not the suite it should be"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := clusterPolicySuite
			if c.from != "" {
				if !strings.Contains(src, c.from) {
					t.Fatalf("suite lacks %q", c.from)
				}
				src = strings.Replace(src, c.from, c.to, 1)
			}
			_, err := celTwin([]byte(src), "# header", c.policies)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}

// Through sync, with this repository's chart and suite: the twin is generated next to the CEL render, checked like
// every generated file, and never written over a hand-written file.
func TestSyncGeneratesTheCELTwinOfEveryClusterPolicySuite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "policies")
	repoPolicies := testfiles.RepoRoot + "/policies/virtual-ingress"
	for _, f := range []string{"clusterpolicy/chart-values.yaml", "generatingpolicy/chart-values.yaml", "clusterpolicy/generate/kyverno-test.yaml"} {
		testfiles.WriteFile(t, filepath.Join(dir, f), testfiles.ReadFile(t, filepath.Join(repoPolicies, f)))
	}
	o := SyncOptions{chartDir: testfiles.RealChart, outDir: dir}
	handWritten := filepath.Join(dir, "generatingpolicy/generate", KyvernoTestFile)
	testfiles.WriteFile(t, handWritten, "# mine\n")
	if err := writeSync(&bytes.Buffer{}, o); err == nil || !strings.Contains(err.Error(), "was not generated") {
		t.Fatalf("want a refusal to overwrite a hand-written twin, got %v", err)
	}
	if err := os.Remove(handWritten); err != nil {
		t.Fatal(err)
	}
	resync := func() {
		t.Helper()
		if err := writeSync(&bytes.Buffer{}, o); err != nil {
			t.Fatal(err)
		}
	}
	resync()

	twin := filepath.Join(dir, "generatingpolicy/generate", KyvernoTestFile)
	got := testfiles.ReadFile(t, twin)
	header, body, _ := strings.Cut(got, "\n")
	if want := generatedPrefix + filepath.ToSlash(filepath.Join(dir, "clusterpolicy/generate", KyvernoTestFile)) + " for the CEL engine" + copySuffix; header != want {
		t.Errorf("header %q, want %q", header, want)
	}
	testfiles.AssertContains(t, body, "name: generate-ingress-cel\n", "isGeneratingPolicy: true\n")
	if ok, out := checkSync(t, o); !ok {
		t.Errorf("check fails right after a sync:\n%s", out)
	}

	// Committed: a twin that is not what its source makes fails the check, and a sync writes it back.
	stale := func(what string) {
		t.Helper()
		if ok, out := checkSync(t, o); ok || !strings.Contains(out, "stale:   "+twin) {
			t.Errorf("%s passes the check:\n%s", what, out)
		}
		resync()
	}
	testfiles.ReplaceInFile(t, twin, "isGeneratingPolicy: true\n  kind: VirtualIngress\n  resources: [tenant-root/wiki]", "rule: generate-ingress\n  kind: VirtualIngress\n  resources: [tenant-root/wiki]")
	stale("a hand-edited twin")
	if testfiles.ReadFile(t, twin) != got {
		t.Error("the hand-edited twin was not written back")
	}
	testfiles.ReplaceInFile(t, filepath.Join(dir, "clusterpolicy/generate", KyvernoTestFile), "name: generate-ingress", "name: generate-ingresses")
	stale("a changed ClusterPolicy suite")
	testfiles.AssertContains(t, testfiles.ReadFile(t, twin), "name: generate-ingresses-cel\n")
}
