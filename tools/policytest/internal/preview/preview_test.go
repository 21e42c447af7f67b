package preview

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/policysim"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/testfiles"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/textdiff"
)

func preview(t *testing.T, vis, services string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	viFile, svcFile := filepath.Join(dir, "virtualingresses.yaml"), filepath.Join(dir, "services.yaml")
	testfiles.WriteFile(t, viFile, vis)
	testfiles.WriteFile(t, svcFile, services)
	var out bytes.Buffer
	err := runPreview(&out, previewOptions{sources: []string{viFile}, services: []string{svcFile}, chart: testfiles.RealChart})
	return out.String(), err
}

func previewObjects(t *testing.T, output string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(output, "\n---\n") {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("output is not YAML documents: %v\n%s", err, output)
		}
		objs = append(objs, &unstructured.Unstructured{Object: obj})
	}
	return objs
}

func str(t *testing.T, obj *unstructured.Unstructured, path ...string) string {
	t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := v.(string)
	return s
}

func TestPreviewResolvesServiceOfTheSameNamespaceAndGeneratesTheIngress(t *testing.T) {
	out, err := preview(t, testfiles.ReadFile(t, "testdata/preview/virtualingresses.yaml"), testfiles.ReadFile(t, "testdata/preview/services.yaml"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	objs := previewObjects(t, out)
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	want := "Ingress default/" + virtualingress.GeneratedName("shop") + ", VirtualIngress default/shop, VirtualIngress default/orphan"
	if strings.Join(kinds, ", ") != want {
		t.Fatalf("documents %q, want %q\n%s", strings.Join(kinds, ", "), want, out)
	}
	ingress, shop, orphan := objs[0], objs[1], objs[2]

	paths, _, _ := unstructured.NestedSlice(ingress.Object, "spec", "rules")
	backend := paths[0].(map[string]any)["http"].(map[string]any)["paths"].([]any)[0].(map[string]any)["backend"].(map[string]any)
	if name := backend["service"].(map[string]any)["name"]; name != "shop-in-default" {
		t.Errorf("Ingress backend Service %v, want shop-in-default (the older match in namespace elsewhere must not count)", name)
	}
	owners := ingress.GetOwnerReferences()
	if len(owners) != 1 || owners[0].UID == "" || owners[0].UID != shop.GetUID() || owners[0].Name != "shop" {
		t.Errorf("ownerReferences %+v, want the VirtualIngress with uid %q", owners, shop.GetUID())
	}
	if conds, _, _ := unstructured.NestedSlice(shop.Object, "status", "conditions"); len(conds) != 1 || conds[0].(map[string]any)["status"] != "True" {
		t.Errorf("shop Ready condition: %v", conds)
	}
	if got := str(t, shop, "status", "ingress", "name"); got != virtualingress.GeneratedName("shop") {
		t.Errorf("status.ingress.name %q", got)
	}
	backends, _, _ := unstructured.NestedSlice(orphan.Object, "status", "backends")
	if len(backends) != 1 || backends[0].(map[string]any)["state"] != "NoMatch" {
		t.Errorf("orphan backends %v, want one NoMatch", backends)
	}

	again, err := preview(t, testfiles.ReadFile(t, "testdata/preview/virtualingresses.yaml"), testfiles.ReadFile(t, "testdata/preview/services.yaml"))
	if err != nil || again != out {
		t.Errorf("a second run differs (err %v):\n%s", err, textdiff.Unified("first", "second", out, again))
	}
}

func TestPreviewRejectsBadInputNamingFileAndDocument(t *testing.T) {
	good := testfiles.ReadFile(t, "testdata/preview/virtualingresses.yaml")
	services := testfiles.ReadFile(t, "testdata/preview/services.yaml")
	cases := map[string]struct {
		vis, services string
		want          []string
	}{
		"unparsable YAML": {
			vis:  good + "---\nkind: [unclosed\n",
			want: []string{"virtualingresses.yaml: document 3: not valid YAML"},
		},
		"unexpected kind in -f": {
			vis:  "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: x}\n",
			want: []string{"virtualingresses.yaml: document 1", `kind "Ingress"`, "expected VirtualIngress (virtual-ingress.io/v1alpha1)"},
		},
		"unexpected kind in -s": {
			vis:      good,
			services: services + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
			want:     []string{"services.yaml: document 3", "expected Service (v1) or Namespace (v1)"},
		},
		"rejected by the CRD": {
			vis: good + `---
apiVersion: virtual-ingress.io/v1alpha1
kind: VirtualIngress
metadata: {name: both}
spec:
  defaultBackend:
    service:
      name: web
      matchLabels: {app: web}
      port: {number: 80}
`,
			want: []string{"virtualingresses.yaml: document 3", "VirtualIngress default/both would be rejected", "exactly one of name or matchLabels"},
		},
		"refused by the chart's admission policy (an annotation)": {
			vis: good + `---
apiVersion: virtual-ingress.io/v1alpha1
kind: VirtualIngress
metadata:
  name: snippet
  annotations: {nginx.ingress.kubernetes.io/configuration-snippet: "return 200;"}
spec:
  defaultBackend:
    service: {name: web, port: {number: 80}}
`,
			want: []string{"virtualingresses.yaml: document 3", "VirtualIngress default/snippet would be refused by the API server",
				"annotation nginx.ingress.kubernetes.io/configuration-snippet is not allowed on a VirtualIngress"},
		},
		"refused by the chart's admission policy (status outside the served namespaces)": {
			vis: good + `---
apiVersion: virtual-ingress.io/v1alpha1
kind: VirtualHTTPRoute
metadata: {name: forged, namespace: kube-system}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
status:
  route:
    spec: {parentRefs: [{name: gw}], hostnames: [bank.example.com], rules: [{backendRefs: [{name: web, port: 80}]}]}
`,
			want: []string{"virtualingresses.yaml: document 3", "VirtualHTTPRoute kube-system/forged would be refused by the API server",
				"status is written by the virtual-ingress policies, which do not act in this namespace"},
		},
		"duplicate": {
			vis:  good + "---\n" + strings.SplitN(good, "---\n", 2)[0],
			want: []string{"document 3", "already defined in", "document 1"},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			svc := c.services
			if svc == "" {
				svc = services
			}
			out, err := preview(t, c.vis, svc)
			if err == nil {
				t.Fatalf("accepted:\n%s", out)
			}
			testfiles.AssertContains(t, err.Error(), c.want...)
		})
	}
}

func TestPreviewWithoutServicesLeavesEveryBackendUnresolved(t *testing.T) {
	var out bytes.Buffer
	err := runPreview(&out, previewOptions{sources: []string{"testdata/preview/virtualingresses.yaml"}, chart: testfiles.RealChart})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	objs := previewObjects(t, out.String())
	if len(objs) != 2 {
		t.Fatalf("want the two VirtualIngresses and no Ingress, got %d documents:\n%s", len(objs), out.String())
	}
	for _, o := range objs {
		backends, _, _ := unstructured.NestedSlice(o.Object, "status", "backends")
		if o.GetKind() != "VirtualIngress" || len(backends) != 1 || backends[0].(map[string]any)["state"] != "NoMatch" {
			t.Errorf("%s %s: backends %v, want one NoMatch", o.GetKind(), o.GetName(), backends)
		}
	}
}

func TestPreviewEngineOptionPicksThePolicyKindsAndBothShowTheSameObjects(t *testing.T) {
	outputs := map[string]string{}
	for _, engine := range []string{policyengine.ClusterPolicy, policyengine.GeneratingPolicy} {
		var out bytes.Buffer
		err := runPreview(&out, previewOptions{
			sources:  []string{"testdata/preview/virtualingresses.yaml"},
			services: []string{"testdata/preview/services.yaml"},
			chart:    testfiles.RealChart,
			engine:   engine,
		})
		if err != nil {
			t.Fatalf("%s: %v\n%s", engine, err, out.String())
		}
		var docs []string
		for _, o := range previewObjects(t, out.String()) {
			data, err := yaml.Marshal(policysim.WithoutKyvernoBookkeeping(o).Object)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, string(data))
		}
		outputs[engine] = strings.Join(docs, "---\n")
	}
	if outputs[policyengine.ClusterPolicy] != outputs[policyengine.GeneratingPolicy] {
		t.Errorf("engines differ:\n%s", textdiff.Unified(policyengine.ClusterPolicy, policyengine.GeneratingPolicy, outputs[policyengine.ClusterPolicy], outputs[policyengine.GeneratingPolicy]))
	}
	if !strings.Contains(outputs[policyengine.GeneratingPolicy], "name: "+virtualingress.GeneratedName("shop")) {
		t.Errorf("the CEL engine generated no Ingress:\n%s", outputs[policyengine.GeneratingPolicy])
	}
}

func TestPreviewRejectsAnUnknownEngine(t *testing.T) {
	err := runPreview(&bytes.Buffer{}, previewOptions{sources: []string{"testdata/preview/virtualingresses.yaml"}, chart: testfiles.RealChart, engine: "kyverno"})
	if err == nil || !strings.Contains(err.Error(), `unknown engine "kyverno"`) {
		t.Fatalf("want an unknown engine error, got %v", err)
	}
}

// preview takes VirtualHTTPRoutes too, rendering the route policies the chart's auto would not render offline.
func TestPreviewGeneratesTheHTTPRouteOfAVirtualHTTPRoute(t *testing.T) {
	var out bytes.Buffer
	err := runPreview(&out, previewOptions{
		sources:  []string{"../../../../fixtures/examples/virtualhttproutes.yaml"},
		services: []string{"../../../../fixtures/clusters/tenant-root.yaml"},
		chart:    testfiles.RealChart,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var kinds []string
	for _, o := range previewObjects(t, out.String()) {
		kinds = append(kinds, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	if got, want := strings.Join(kinds, ", "), "HTTPRoute tenant-root/"+virtualingress.GeneratedName("coder")+", VirtualHTTPRoute tenant-root/coder"; got != want {
		t.Errorf("documents %q, want %q\n%s", got, want, out.String())
	}
}
