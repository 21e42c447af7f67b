package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// compareFixtures are the default inputs of `policytest compare`, seen from this package's directory.
func compareFixtures(t *testing.T) compareOptions {
	t.Helper()
	vis, err := filepath.Glob("../../fixtures/virtualingresses/*.yaml")
	if err != nil || len(vis) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	updates, err := filepath.Glob("../../fixtures/virtualingresses/updates/*.yaml")
	if err != nil || len(updates) == 0 {
		t.Fatalf("no update fixtures: %v", err)
	}
	return compareOptions{
		virtualIngresses: append([]string{"../../fixtures/examples/virtualingresses.yaml"}, vis...),
		updates:          updates,
		services:         []string{"../../fixtures/clusters/tenant-root.yaml"},
		chart:            realChart,
	}
}

func TestCompareFindsBothEnginesOfTheChartEqualOnEveryFixture(t *testing.T) {
	o := compareFixtures(t)
	o.junitFile = filepath.Join(t.TempDir(), "parity.xml")
	var out bytes.Buffer
	if err := runCompare(&out, o); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	in, err := readSimInputs(append(append([]string{}, o.virtualIngresses...), o.updates...), o.services, true)
	if err != nil {
		t.Fatal(err)
	}
	tests, failures, _ := junitCounts(t, o.junitFile)
	if tests != len(in.vis) || failures != 0 {
		t.Errorf("JUnit: %d cases, %d failures; want one passing case per VirtualIngress (%d)\n%s", tests, failures, len(in.vis), out.String())
	}
	assertContains(t, out.String(),
		"PASS  CREATE VirtualIngress tenant-root/wiki (../../fixtures/virtualingresses/no-match.yaml)",
		"PASS  UPDATE VirtualIngress tenant-root/relay-legacy (../../fixtures/virtualingresses/updates/service-gone.yaml)")
}

// A chart whose CEL engine words one message differently: compare must fail on that VirtualIngress only and show
// the difference.
func TestCompareFailsWhenTheCELEngineWritesAnotherStatus(t *testing.T) {
	chart := copyDir(t, realChart)
	replaceInFile(t, filepath.Join(chart, "files/cel/resolve.yaml"), `"no Service in namespace "`, `"no Service at all in namespace "`)
	o := compareFixtures(t)
	o.chart = chart
	var out bytes.Buffer
	err := runCompare(&out, o)
	if !errors.Is(err, errReported) {
		t.Fatalf("want a reported failure, got %v\n%s", err, out.String())
	}
	assertContains(t, out.String(),
		"FAIL  CREATE VirtualIngress tenant-root/wiki (../../fixtures/virtualingresses/no-match.yaml)",
		"the engines differ (- clusterPolicy, + generatingPolicy)",
		"-    message: no Service in namespace tenant-root matches",
		"+    message: no Service at all in namespace tenant-root matches",
		"PASS  CREATE VirtualIngress tenant-root/coder (../../fixtures/examples/virtualingresses.yaml)")
}

// The same for the generated Ingress: the ownerReference of the GeneratingPolicy's Ingress differs.
func TestCompareFailsWhenTheGeneratedIngressesDiffer(t *testing.T) {
	chart := copyDir(t, realChart)
	replaceInFile(t, filepath.Join(chart, "files/cel/generate.yaml"), `"blockOwnerDeletion": dyn(true)`, `"blockOwnerDeletion": dyn(false)`)
	o := compareFixtures(t)
	o.chart = chart
	o.virtualIngresses, o.updates = []string{"../../fixtures/examples/virtualingresses.yaml", "../../fixtures/virtualingresses/no-match.yaml"}, nil
	var out bytes.Buffer
	if err := runCompare(&out, o); !errors.Is(err, errReported) {
		t.Fatalf("want a reported failure, got %v\n%s", err, out.String())
	}
	assertContains(t, out.String(),
		"FAIL  CREATE VirtualIngress tenant-root/coder",
		"-    blockOwnerDeletion: true\n      +    blockOwnerDeletion: false",
		// wiki generates nothing in either engine, so the change does not show there.
		"PASS  CREATE VirtualIngress tenant-root/wiki",
		"1 passed, 1 failed")
}

func TestCompareIgnoresOnlyKyvernosBookkeepingLabels(t *testing.T) {
	o := &unstructured.Unstructured{}
	o.SetLabels(map[string]string{
		"generate.kyverno.io/policy-name": "virtual-ingress-generate",
		"app.kubernetes.io/managed-by":    "kyverno",
		"team":                            "platform",
		"generate.kyverno.io":             "not a bookkeeping prefix",
	})
	got := withoutKyvernoBookkeeping(o).GetLabels()
	if len(got) != 2 || got["team"] != "platform" || got["generate.kyverno.io"] == "" {
		t.Errorf("labels %v, want team and generate.kyverno.io kept", got)
	}
	// A managed-by copied from the VirtualIngress is overwritten with kyverno by both engines on a cluster, so it is
	// bookkeeping whatever its value here.
	o.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "Helm", "team": "platform"})
	if got := withoutKyvernoBookkeeping(o).GetLabels(); len(got) != 1 || got["team"] != "platform" {
		t.Errorf("labels %v, want only team", got)
	}
}

func TestCompareReportsAnEngineErrorAsAFailure(t *testing.T) {
	chart := copyDir(t, realChart)
	// A CEL runtime error in the resolve MutatingPolicy (an unknown variable is a compile error; this one fails when
	// evaluated): Kyverno reports the rule as an error, which the webhook turns into a rejected write.
	replaceInFile(t, filepath.Join(chart, "files/cel/resolve.yaml"), `oldObject == null ? [] : oldObject.?status.?backends.orValue([])`, `[1, 2][5]`)
	o := compareFixtures(t)
	o.chart = chart
	o.virtualIngresses, o.updates = []string{"../../fixtures/virtualingresses/no-match.yaml"}, nil
	var out bytes.Buffer
	if err := runCompare(&out, o); !errors.Is(err, errReported) {
		t.Fatalf("want a reported failure, got %v\n%s", err, out.String())
	}
	assertContains(t, out.String(), "FAIL  CREATE VirtualIngress tenant-root/wiki", "an engine failed on it", "clusterPolicy: <nil>", "generatingPolicy: ")
	if strings.Contains(out.String(), "generatingPolicy: <nil>") {
		t.Errorf("the CEL engine's error is not shown:\n%s", out.String())
	}
}
