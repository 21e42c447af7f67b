package golden

import (
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/testfiles"
)

// A template's CRD whose spec is that of the chart's CRD file shows its metadata and names the file for its spec; one
// whose spec differs in any way shows in full, so that the golden file catches it.
func TestNormaliseNamesTheCRDFileOfATemplateCRDOnlyWhenTheSpecIsTheFiles(t *testing.T) {
	const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    helm.sh/resource-policy: keep
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
`
	files := map[string]crdFile{"widgets.example.com": {
		path: "files/crds/widgets.yaml",
		spec: map[string]any{"group": "example.com", "scope": "Namespaced"},
	}}
	manifest := "---\n# Source: demo/templates/crds.yaml\n" + crd
	r, err := normalise(manifest, nil, files)
	if err != nil {
		t.Fatal(err)
	}
	got := r.text(map[string]bool{"demo/templates/crds.yaml": true})
	testfiles.AssertContains(t, got, "helm.sh/resource-policy: keep", "spec: # as in files/crds/widgets.yaml, not repeated here")
	if strings.Contains(got, "scope: Namespaced") {
		t.Errorf("the spec is repeated:\n%s", got)
	}

	r, err = normalise(strings.Replace(manifest, "Namespaced", "Cluster", 1), nil, files)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.text(nil); !strings.Contains(got, "scope: Cluster") {
		t.Errorf("a spec that is not the file's is not shown:\n%s", got)
	}
}
