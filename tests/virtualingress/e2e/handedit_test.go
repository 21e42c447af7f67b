//go:build e2e

package e2e

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
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
	back := waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), service)
	if back.UID == ing.UID {
		t.Fatalf("the Ingress was never deleted (UID %s)", back.UID)
	}
}

// testIngressAnnotationEditedByHand changes an annotation the VirtualIngress gives its Ingress. The status controller
// reports the Ingress out of date (its labels and annotations are compared as well as its spec) and repairs it; the
// clusterPolicy engine may put it back first by synchronizing. Either way the VirtualIngress's value comes back, and
// Ready with it.
func testIngressAnnotationEditedByHand(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-handannotate")
	_, ing := resolvedCoder(t, ns)
	waitReady(t, ns, "coder", "True", "IngressUpToDate")
	// A generation request still in Kyverno's queue (the touches resolution makes) would put the value back before the
	// status controller saw it edited: that is not what this test is about.
	waitUpdateRequestsDrained(t)
	const key = "nginx.ingress.kubernetes.io/proxy-read-timeout"
	want := ing.Annotations[key]
	if want == "" {
		t.Fatalf("the coder Ingress has no %s annotation to edit: %v", key, ing.Annotations)
	}
	patch := []byte(`{"metadata":{"annotations":{"` + key + `":"1"}}}`)
	if _, err := env.kube.NetworkingV1().Ingresses(ns).Patch(ctx, ing.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if env.engine != policyengine.ClusterPolicy {
		// Nothing else restores it under this engine: the report and the repair are the status controller's.
		waitEvent(t, ns, "coder", "IngressOutOfDate")
	}
	eventually(t, "the annotation edited on the Ingress put back", func() (bool, string, error) {
		now, err := getIngress(ns, ing.Name)
		if err != nil {
			return false, "", err
		}
		return now.Annotations[key] == want, now.Annotations[key], nil
	})
	waitReady(t, ns, "coder", "True", "IngressUpToDate")
}
