package chart

import (
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

// routeValues are the values of one case: policy.engine and gatewayAPI.routes.
func routeValues(engine string, routes any) map[string]any {
	return map[string]any{"policy": map[string]any{"engine": engine}, "gatewayAPI": map[string]any{"routes": routes}}
}

// TestRoutePoliciesOnlyWhereServed: the VirtualHTTPRoute policies of the engine, Kyverno's and the status controller's
// rights on HTTPRoutes and the controller's --routes come together, only with routes on, and never the other
// engine's. (auto on a cluster that serves HTTPRoute is the end-to-end suite's: renders here see no Gateway API.)
func TestRoutePoliciesOnlyWhereServed(t *testing.T) {
	routePolicies := map[string][]string{
		"generatingPolicy": {
			"MutatingPolicy/virtual-ingress-resolve-routes", "MutatingPolicy/virtual-ingress-service-events-routes",
			"GeneratingPolicy/virtual-ingress-generate-routes", "ValidatingPolicy/virtual-ingress-route-name",
		},
		"clusterPolicy": {
			"ClusterPolicy/virtual-ingress-resolve-routes", "ClusterPolicy/virtual-ingress-service-events-routes",
			"ClusterPolicy/virtual-ingress-generate-routes", "ClusterPolicy/virtual-ingress-route-name",
		},
	}
	const routesCache = "GlobalContextEntry/virtual-ingress-virtualhttproutes"
	for _, c := range []struct {
		name   string
		engine string
		routes any
		served bool
	}{
		{"generatingPolicy, routes on", "generatingPolicy", true, true},
		{"generatingPolicy, auto without Gateway API", "generatingPolicy", "auto", false},
		{"generatingPolicy, routes off", "generatingPolicy", false, false},
		{"clusterPolicy, routes on", "clusterPolicy", true, true},
		{"clusterPolicy, auto without Gateway API", "clusterPolicy", "auto", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			docs, err := render.Render(chartDir, nil, routeValues(c.engine, c.routes))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			var manifest, rbac strings.Builder
			for _, d := range docs {
				names = append(names, d.Object.GetKind()+"/"+d.Object.GetName())
				manifest.WriteString(d.YAML)
				if k := d.Object.GetKind(); k == "ClusterRole" || k == "Role" {
					rbac.WriteString(d.YAML)
				}
			}
			for engine, policies := range routePolicies {
				for _, p := range append(policies, routesCache) {
					want := c.served && (engine == c.engine || p == routesCache)
					if slices.Contains(names, p) != want {
						t.Errorf("%s rendered: %v, want %v", p, !want, want)
					}
				}
			}
			if got := strings.Contains(rbac.String(), "resources: [httproutes]"); got != c.served {
				t.Errorf("rights on HTTPRoutes granted: %v, want %v", got, c.served)
			}
			if got := strings.Contains(manifest.String(), "--routes=true"); got != c.served {
				t.Errorf("status controller --routes=true: %v, want %v", got, c.served)
			}
		})
	}
}

// TestNotesSayWhetherRoutesAreServed: after install, the notes say whether VirtualHTTPRoutes are served, and if not,
// why.
func TestNotesSayWhetherRoutesAreServed(t *testing.T) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		values map[string]any
		want   string
	}{
		{routeValues("generatingPolicy", true), "VirtualHTTPRoutes (Gateway API) are served too"},
		{routeValues("generatingPolicy", "auto"), "the cluster does not serve gateway.networking.k8s.io/v1 HTTPRoute"},
		{routeValues("clusterPolicy", true), "VirtualHTTPRoutes (Gateway API) are served too"},
		{routeValues("clusterPolicy", false), "gatewayAPI.routes is false"},
	} {
		install, err := render.ClientOnlyInstall("virtual-ingress", render.Namespace)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := install.Run(chrt, c.values)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rel.Info.Notes, c.want) {
			t.Errorf("values %v: notes lack %q:\n%s", c.values, c.want, rel.Info.Notes)
		}
	}
}
