package virtualingress

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// The chart passes the status controller what it must agree on with the policies; the in-process controllers of the
// e2e suite and the bench read it back through the controller's own flags.
func TestChartControllerOptionsFollowValues(t *testing.T) {
	cc, err := RenderChartController(nil)
	if err != nil {
		t.Fatal(err)
	}
	defaults := cc.Options
	if defaults.NameSuffix != NameSuffix || defaults.OnMultipleMatches != "error" || defaults.RepairAfter != 30*time.Second ||
		!slices.Contains(defaults.ExcludedAnnotations, "kubectl.kubernetes.io/last-applied-configuration") ||
		!slices.Contains(defaults.ExcludedLabels, "app.kubernetes.io/instance") {
		t.Fatalf("chart defaults read as %+v", defaults)
	}
	cc, err = RenderChartController(map[string]any{
		"generatedIngress": map[string]any{"nameSuffix": "", "excludedLabels": []any{}, "excludedAnnotations": []any{"a.example/x", "b.example/y"}},
		"serviceDiscovery": map[string]any{"onMultipleMatches": "oldest"},
		"controller":       map[string]any{"repairAfter": "1m"},
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := cc.Options
	if opts.NameSuffix != "" || opts.OnMultipleMatches != "oldest" || opts.RepairAfter != time.Minute ||
		len(opts.ExcludedLabels) != 0 || !slices.Equal(opts.ExcludedAnnotations, []string{"a.example/x", "b.example/y"}) {
		t.Fatalf("values read as %+v", opts)
	}
}

// The demo and the e2e suite run the controller with the identity the Deployment's Pods get: the ServiceAccount named
// by the Deployment must be one the chart creates in the release's namespace.
func TestRenderChartControllerNamesTheChartsServiceAccount(t *testing.T) {
	cc, err := RenderChartController(nil)
	if err != nil {
		t.Fatal(err)
	}
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := render.Render(filepath.Join(root, "charts", "virtual-ingress"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range docs {
		if d.Object.GetKind() == "ServiceAccount" && d.Object.GetName() == cc.ServiceAccount && d.Object.GetNamespace() == cc.Namespace {
			found = true
		}
	}
	if cc.ServiceAccount == "" || cc.Namespace == "" || !found {
		t.Fatalf("the Deployment runs as %s/%s, which the chart does not create", cc.Namespace, cc.ServiceAccount)
	}
	if !slices.Contains(cc.Args, "--name-suffix="+NameSuffix) {
		t.Fatalf("arguments %q", cc.Args)
	}
}

// Every values case the chart is tested with gives the controller arguments its binary takes, all of them.
func TestChartControllerArgumentsParseInEveryCase(t *testing.T) {
	dir, err := chartDir()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := render.Cases(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, files := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := renderChartController(files, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}
