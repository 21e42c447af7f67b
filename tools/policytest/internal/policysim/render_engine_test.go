package policysim

import (
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/testfiles"
)

// policy.engine=auto follows what the cluster serves: Helm's .Capabilities.APIVersions, which `helm install` fills
// from discovery and `helm template --api-versions` by hand. internal/testkit/render's fixed API versions do not list
// policies.kyverno.io/v1/GeneratingPolicy, so the golden default is the ClusterPolicy engine.
func TestEngineAutoPicksGeneratingPolicyOnlyWhenTheClusterServesIt(t *testing.T) {
	for _, c := range []struct {
		name  string
		extra []string
		want  []string // kinds of the kyverno policies rendered
	}{
		{"without GeneratingPolicy", nil, []string{"ClusterPolicy", "ClusterPolicy", "ClusterPolicy", "ClusterPolicy"}},
		{"with policies.kyverno.io/v1/GeneratingPolicy", []string{"policies.kyverno.io/v1/GeneratingPolicy"}, []string{"GeneratingPolicy", "MutatingPolicy", "MutatingPolicy", "ValidatingPolicy"}},
		// The group/version alone is not enough: the kind must be served.
		{"with policies.kyverno.io/v1 only", []string{"policies.kyverno.io/v1"}, []string{"ClusterPolicy", "ClusterPolicy", "ClusterPolicy", "ClusterPolicy"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			install, err := render.ClientOnlyInstall("virtual-ingress", render.Namespace)
			if err != nil {
				t.Fatal(err)
			}
			install.APIVersions = append(install.APIVersions, c.extra...)
			chrt := loadChart(t, testfiles.RealChart)
			rel, err := install.Run(chrt, map[string]any{"policy": map[string]any{"engine": "auto"}})
			if err != nil {
				t.Fatal(err)
			}
			docs, err := render.Split(rel.Manifest)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, d := range docs {
				// The GlobalContextEntries both engines read are rendered either way.
				if g := d.Object.GroupVersionKind().Group; (g == "kyverno.io" || g == "policies.kyverno.io") && d.Object.GetKind() != "GlobalContextEntry" {
					kinds = append(kinds, d.Object.GetKind())
				}
			}
			if len(kinds) != len(c.want) {
				t.Fatalf("kinds %v, want %v", kinds, c.want)
			}
			for i := range kinds {
				if kinds[i] != c.want[i] {
					t.Fatalf("kinds %v, want %v", kinds, c.want)
				}
			}
		})
	}
}

func loadChart(t *testing.T, dir string) *chart.Chart {
	t.Helper()
	c, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
