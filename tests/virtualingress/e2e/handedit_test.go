//go:build e2e

package e2e

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

// testIngressDeletedByHand deletes a generated Ingress. The clusterPolicy engine synchronizes its downstreams and
// recreates it by itself; the generatingPolicy engine runs without synchronization (see the chart's generate
// policy) and recreates it at the next change of its VirtualIngress. Either way the Ingress comes back.
func testIngressDeletedByHand(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-handdelete")
	service, ing := resolvedCoder(t, ns)
	if err := env.kube.NetworkingV1().Ingresses(ns).Delete(context.Background(), ing.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if env.engine != policyengine.ClusterPolicy {
		patch := []byte(`{"metadata":{"annotations":{"e2e/changed":"after the Ingress was deleted"}}}`)
		if _, err := env.dyn.Resource(virtualIngressGVR).Namespace(ns).Patch(context.Background(), "coder", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	back := waitIngressServices(t, ns, "coder-generated", service)
	if back.UID == ing.UID {
		t.Fatalf("the Ingress was never deleted (UID %s)", back.UID)
	}
}
