package compare

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/policysim"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/results"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/testfiles"
)

// compareFixtures are the default inputs of `policytest compare`, seen from this package's directory.
func compareFixtures(t *testing.T) compareOptions {
	t.Helper()
	o, err := defaultCompareOptions(testfiles.RepoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"virtualingresses", "virtualhttproutes"} {
		for _, files := range [][]string{o.creates, o.updates} {
			if !slices.ContainsFunc(files, func(f string) bool { return strings.Contains(f, "fixtures/"+kind+"/") }) {
				t.Fatalf("no fixtures of fixtures/%s/ in %v", kind, files)
			}
		}
	}
	return o
}

func TestCompareFindsBothEnginesOfTheChartEqualOnEveryFixture(t *testing.T) {
	o := compareFixtures(t)
	o.junitFile = filepath.Join(t.TempDir(), "parity.xml")
	var out bytes.Buffer
	if err := runCompare(&out, o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	in, err := policysim.ReadInputs(slices.Concat(o.creates, o.updates), o.services, true)
	if err != nil {
		t.Fatal(err)
	}
	tests, failures, _ := testfiles.JUnitCounts(t, o.junitFile)
	if tests != len(in.Sources) || failures != 0 {
		t.Errorf("JUnit: %d cases, %d failures; want one passing case per input (%d)\n%s", tests, failures, len(in.Sources), out.String())
	}
	testfiles.AssertContains(t, out.String(),
		"PASS  CREATE VirtualIngress tenant-root/wiki (../../../../fixtures/virtualingresses/no-match.yaml)",
		"PASS  UPDATE VirtualIngress tenant-root/relay-legacy (../../../../fixtures/virtualingresses/updates/service-gone.yaml)",
		"PASS  CREATE VirtualHTTPRoute tenant-root/coder (../../../../fixtures/examples/virtualhttproutes.yaml)",
		"PASS  UPDATE VirtualHTTPRoute tenant-root/coder (../../../../fixtures/virtualhttproutes/resolved.yaml)",
		"PASS  UPDATE VirtualHTTPRoute tenant-root/web (../../../../fixtures/virtualhttproutes/updates/multiple-kept.yaml)")
}

// A chart whose CEL engine words one message differently: compare must fail on that VirtualIngress only and show
// the difference.
func TestCompareFailsWhenTheCELEngineWritesAnotherStatus(t *testing.T) {
	chart := testfiles.CopyDir(t, testfiles.RealChart)
	testfiles.ReplaceInFile(t, filepath.Join(chart, "files/cel/resolve.yaml"), `"no Service in namespace "`, `"no Service at all in namespace "`)
	o := compareFixtures(t)
	o.chart = chart
	var out bytes.Buffer
	err := runCompare(&out, o)
	if !errors.Is(err, results.ErrReported) {
		t.Fatalf("want a reported failure, got %v\n%s", err, out.String())
	}
	testfiles.AssertContains(t, out.String(),
		"FAIL  CREATE VirtualIngress tenant-root/wiki (../../../../fixtures/virtualingresses/no-match.yaml)",
		"the engines differ (- clusterPolicy, + generatingPolicy)",
		"-    message: no Service in namespace tenant-root matches",
		"+    message: no Service at all in namespace tenant-root matches",
		"PASS  CREATE VirtualIngress tenant-root/coder (../../../../fixtures/examples/virtualingresses.yaml)")
}

// The same for the generated Ingress: the ownerReference of the GeneratingPolicy's Ingress differs.
func TestCompareFailsWhenTheGeneratedIngressesDiffer(t *testing.T) {
	chart := testfiles.CopyDir(t, testfiles.RealChart)
	testfiles.ReplaceInFile(t, filepath.Join(chart, "files/cel/generate.yaml"), `"blockOwnerDeletion": dyn(true)`, `"blockOwnerDeletion": dyn(false)`)
	o := compareFixtures(t)
	o.chart = chart
	o.creates, o.updates = []string{"../../../../fixtures/examples/virtualingresses.yaml", "../../../../fixtures/virtualingresses/no-match.yaml"}, nil
	var out bytes.Buffer
	if err := runCompare(&out, o); !errors.Is(err, results.ErrReported) {
		t.Fatalf("want a reported failure, got %v\n%s", err, out.String())
	}
	testfiles.AssertContains(t, out.String(),
		"FAIL  CREATE VirtualIngress tenant-root/coder",
		"-    blockOwnerDeletion: true\n      +    blockOwnerDeletion: false",
		// wiki generates nothing in either engine, so the change does not show there.
		"PASS  CREATE VirtualIngress tenant-root/wiki",
		"1 passed, 1 failed")
}

func TestCompareReportsAnEngineErrorAsAFailure(t *testing.T) {
	chart := testfiles.CopyDir(t, testfiles.RealChart)
	// A CEL runtime error in the resolve MutatingPolicy (an unknown variable is a compile error; this one fails when
	// evaluated): Kyverno reports the rule as an error, which the webhook turns into a rejected write.
	testfiles.ReplaceInFile(t, filepath.Join(chart, "files/cel/resolve.yaml"), `oldObject == null ? [] : oldObject.?status.?backends.orValue([])`, `[1, 2][5]`)
	o := compareFixtures(t)
	o.chart = chart
	o.creates, o.updates = []string{"../../../../fixtures/virtualingresses/no-match.yaml"}, nil
	var out bytes.Buffer
	if err := runCompare(&out, o); !errors.Is(err, results.ErrReported) {
		t.Fatalf("want a reported failure, got %v\n%s", err, out.String())
	}
	testfiles.AssertContains(t, out.String(), "FAIL  CREATE VirtualIngress tenant-root/wiki", "an engine failed on it", "clusterPolicy: <nil>", "generatingPolicy: ")
	if strings.Contains(out.String(), "generatingPolicy: <nil>") {
		t.Errorf("the CEL engine's error is not shown:\n%s", out.String())
	}
}

// A VirtualHTTPRoute goes through the route policies only: a change to the CEL route resolve policy fails the route
// and leaves the VirtualIngress of the same name and outcome passing.
func TestCompareFailsOnlyTheRouteWhenTheCELRoutePolicyWritesAnotherStatus(t *testing.T) {
	chart := testfiles.CopyDir(t, testfiles.RealChart)
	testfiles.ReplaceInFile(t, filepath.Join(chart, "files/cel/resolve-route.yaml"), `"no Service in namespace "`, `"no Service at all in namespace "`)
	o := compareFixtures(t)
	o.chart = chart
	o.creates, o.updates = []string{"../../../../fixtures/virtualingresses/no-match.yaml", "../../../../fixtures/virtualhttproutes/no-match.yaml"}, nil
	var out bytes.Buffer
	if err := runCompare(&out, o); !errors.Is(err, results.ErrReported) {
		t.Fatalf("want a reported failure, got %v\n%s", err, out.String())
	}
	testfiles.AssertContains(t, out.String(),
		"PASS  CREATE VirtualIngress tenant-root/wiki (../../../../fixtures/virtualingresses/no-match.yaml)",
		"FAIL  CREATE VirtualHTTPRoute tenant-root/wiki (../../../../fixtures/virtualhttproutes/no-match.yaml)",
		"-    message: no Service in namespace tenant-root matches",
		"+    message: no Service at all in namespace tenant-root matches",
		"1 passed, 1 failed")
}

// Values that choose whether the route policies render are obeyed, even where a route then has nothing to run
// through.
func TestCompareKeepsTheValuesChoiceOfRoutePolicies(t *testing.T) {
	o := compareFixtures(t)
	o.creates, o.updates = []string{"../../../../fixtures/virtualhttproutes/no-match.yaml"}, nil
	o.values = []string{filepath.Join(t.TempDir(), "values.yaml")}
	testfiles.WriteFile(t, o.values[0], "gatewayAPI:\n  routes: false\n")
	err := runCompare(&bytes.Buffer{}, o)
	if err == nil {
		t.Fatal("gatewayAPI.routes: false accepted a VirtualHTTPRoute")
	}
	testfiles.AssertContains(t, err.Error(), "no-match.yaml: document 1: VirtualHTTPRoute tenant-root/wiki", "(gatewayAPI.routes: true renders them)")
}
