package policysim

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestCompareIgnoresOnlyKyvernosBookkeepingLabels(t *testing.T) {
	o := &unstructured.Unstructured{}
	o.SetLabels(map[string]string{
		"generate.kyverno.io/policy-name": "virtual-ingress-generate",
		"app.kubernetes.io/managed-by":    "kyverno",
		"team":                            "platform",
		"generate.kyverno.io":             "not a bookkeeping prefix",
	})
	got := WithoutKyvernoBookkeeping(o).GetLabels()
	if len(got) != 2 || got["team"] != "platform" || got["generate.kyverno.io"] == "" {
		t.Errorf("labels %v, want team and generate.kyverno.io kept", got)
	}
	// A managed-by copied from the VirtualIngress is overwritten with kyverno by both engines on a cluster, so it is
	// bookkeeping whatever its value here.
	o.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "Helm", "team": "platform"})
	if got := WithoutKyvernoBookkeeping(o).GetLabels(); len(got) != 1 || got["team"] != "platform" {
		t.Errorf("labels %v, want only team", got)
	}
}
