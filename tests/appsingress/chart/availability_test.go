package chart

import (
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

// served are the rendered CoreDNS and HAProxy Deployments and PodDisruptionBudgets, by component.
type served struct {
	deployments map[string]appsv1.Deployment
	pdbs        map[string]policyv1.PodDisruptionBudget
	operator    appsv1.Deployment
}

func renderServed(t *testing.T, files []string, values map[string]any) served {
	t.Helper()
	docs, err := render.Render(chartDir, files, values)
	if err != nil {
		t.Fatal(err)
	}
	s := served{deployments: map[string]appsv1.Deployment{}, pdbs: map[string]policyv1.PodDisruptionBudget{}}
	for _, d := range docs {
		component := d.Object.GetLabels()["app.kubernetes.io/component"]
		switch d.Object.GetKind() {
		case "Deployment":
			var dep appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object.Object, &dep); err != nil {
				t.Fatal(err)
			}
			if component == "operator" {
				s.operator = dep
			} else {
				s.deployments[component] = dep
			}
		case "PodDisruptionBudget":
			var pdb policyv1.PodDisruptionBudget
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object.Object, &pdb); err != nil {
				t.Fatal(err)
			}
			s.pdbs[component] = pdb
		}
	}
	if len(s.deployments) != 2 {
		t.Fatalf("serving Deployments %v", s.deployments)
	}
	return s
}

// selects is whether a label selector picks a Deployment's Pods, and only the Pods of that component.
func selects(t *testing.T, sel *metav1.LabelSelector, dep appsv1.Deployment) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatal(err)
	}
	return !s.Empty() && s.Matches(labels.Set(dep.Spec.Template.Labels))
}

// Each of CoreDNS and HAProxy has a PodDisruptionBudget over exactly its Pods and spreads its Pods over nodes and
// zones, the spread's selectors filled in by the chart.
func TestDisruptionBudgetsAndSpread(t *testing.T) {
	s := renderServed(t, nil, nil)
	for component, dep := range s.deployments {
		pdb, ok := s.pdbs[component]
		if !ok || pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || !selects(t, pdb.Spec.Selector, dep) {
			t.Errorf("%s: PodDisruptionBudget %+v", component, pdb.Spec)
		}
		other := s.deployments[map[string]string{"dns": "proxy", "proxy": "dns"}[component]]
		if selects(t, pdb.Spec.Selector, other) {
			t.Errorf("%s: the PodDisruptionBudget also selects the other component's Pods", component)
		}
		keys := map[string]bool{}
		for _, c := range dep.Spec.Template.Spec.TopologySpreadConstraints {
			if !selects(t, c.LabelSelector, dep) || selects(t, c.LabelSelector, other) {
				t.Errorf("%s: spread over %s selects %v", component, c.TopologyKey, c.LabelSelector)
			}
			keys[c.TopologyKey] = true
		}
		if !keys["kubernetes.io/hostname"] || !keys["topology.kubernetes.io/zone"] {
			t.Errorf("%s: spread over %v", component, keys)
		}
	}
	// The values schema takes the knobs (it refused them before), and the chart honours them.
	s = renderServed(t, nil, map[string]any{"dns": map[string]any{
		"podDisruptionBudget":       map[string]any{"enabled": false},
		"affinity":                  map[string]any{"podAntiAffinity": map[string]any{}},
		"topologySpreadConstraints": []any{map[string]any{"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"}},
		"updateStrategy":            map[string]any{"type": "Recreate"},
	}})
	dns := s.deployments["dns"]
	if _, ok := s.pdbs["dns"]; ok {
		t.Error("a PodDisruptionBudget with podDisruptionBudget.enabled false")
	}
	if dns.Spec.Template.Spec.Affinity == nil || dns.Spec.Template.Spec.Affinity.PodAntiAffinity == nil ||
		len(dns.Spec.Template.Spec.TopologySpreadConstraints) != 1 || dns.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("values not honoured: %+v %+v", dns.Spec.Template.Spec, dns.Spec.Strategy)
	}
}

// A rolling update never needs two Pods on one node's ports (hostNetwork) nor two Pods with one static address
// (a secondary network); on the pod network a new Pod is up before an old one stops.
func TestUpdateStrategyByAttachmentMode(t *testing.T) {
	hostNetwork := map[string]any{
		"dns":   map[string]any{"hostNetwork": true, "vlanAddresses": []any{"10.1.0.5"}},
		"proxy": map[string]any{"hostNetwork": true},
	}
	secondary := []string{filepath.Join(chartDir, "ci", "secondary-network-values.yaml")}
	for _, c := range []struct {
		name                   string
		files                  []string
		values                 map[string]any
		recreate               bool
		maxSurge, maxUnavailbl int
	}{
		{"pod network", nil, nil, false, 1, 0},
		{"hostNetwork", nil, hostNetwork, false, 0, 1},
		{"secondary network", secondary, nil, true, 0, 0},
	} {
		for component, dep := range renderServed(t, c.files, c.values).deployments {
			st := dep.Spec.Strategy
			switch {
			case c.recreate:
				if st.Type != appsv1.RecreateDeploymentStrategyType {
					t.Errorf("%s %s: strategy %+v, want Recreate", c.name, component, st)
				}
			case st.Type != appsv1.RollingUpdateDeploymentStrategyType || st.RollingUpdate == nil ||
				st.RollingUpdate.MaxSurge.IntValue() != c.maxSurge || st.RollingUpdate.MaxUnavailable.IntValue() != c.maxUnavailbl:
				t.Errorf("%s %s: strategy %+v, want maxSurge %d maxUnavailable %d", c.name, component, st.RollingUpdate, c.maxSurge, c.maxUnavailbl)
			}
		}
	}
}

// The memory limits leave headroom over what the bench measured: CoreDNS 123 MiB at 200 clusters, the operator
// 606 MiB at 2,000; and each request covers the 200-cluster peak (CoreDNS 123 MiB, the operator 186 MiB).
func TestMemoryFromMeasuredPeaks(t *testing.T) {
	s := renderServed(t, nil, nil)
	for _, c := range []struct {
		name      string
		dep       appsv1.Deployment
		container string
		request   string
		limit     string
	}{
		{"CoreDNS", s.deployments["dns"], "coredns", "123Mi", "154Mi"}, // 123 MiB × 1.25
		{"operator", s.operator, "operator", "186Mi", "758Mi"},         // 606 MiB × 1.25
	} {
		found := false
		for _, ct := range c.dep.Spec.Template.Spec.Containers {
			if ct.Name != c.container {
				continue
			}
			found = true
			if r := ct.Resources.Requests[corev1.ResourceMemory]; r.Cmp(resource.MustParse(c.request)) < 0 {
				t.Errorf("%s requests %s, below the measured %s", c.name, r.String(), c.request)
			}
			if l := ct.Resources.Limits[corev1.ResourceMemory]; l.Cmp(resource.MustParse(c.limit)) < 0 {
				t.Errorf("%s limit %s, below %s", c.name, l.String(), c.limit)
			}
		}
		if !found {
			t.Errorf("no %s container", c.container)
		}
	}
}
