package virtualingress

import (
	"slices"
	"testing"
	"time"
)

// The chart passes the status controller what it must agree on with the policies; the in-process controllers of the
// e2e suite and the bench read it back through the controller's own flags.
func TestChartControllerOptionsFollowValues(t *testing.T) {
	defaults, err := ChartControllerOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if defaults.NameSuffix != "-generated" || defaults.OnMultipleMatches != "error" || defaults.RepairAfter != 30*time.Second ||
		!slices.Contains(defaults.ExcludedAnnotations, "kubectl.kubernetes.io/last-applied-configuration") ||
		!slices.Contains(defaults.ExcludedLabels, "app.kubernetes.io/instance") {
		t.Fatalf("chart defaults read as %+v", defaults)
	}
	opts, err := ChartControllerOptions(map[string]any{
		"generatedIngress": map[string]any{"nameSuffix": "", "excludedLabels": []any{}, "excludedAnnotations": []any{"a.example/x", "b.example/y"}},
		"serviceDiscovery": map[string]any{"onMultipleMatches": "oldest"},
		"controller":       map[string]any{"repairAfter": "1m"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if opts.NameSuffix != "" || opts.OnMultipleMatches != "oldest" || opts.RepairAfter != time.Minute ||
		len(opts.ExcludedLabels) != 0 || !slices.Equal(opts.ExcludedAnnotations, []string{"a.example/x", "b.example/y"}) {
		t.Fatalf("values read as %+v", opts)
	}
}
