//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
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
	_, ing := settledCoder(t, ns)
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

// testOrphanedRequestHoldsNoRepair: Kyverno's admission controller creates an UpdateRequest, then sets it Pending in a
// second write; one that stopped in between (a Pod replaced during an upgrade of Kyverno) leaves a request without a
// state, which Kyverno never processes. Such a request naming the VirtualIngress must not hold the status controller's
// repair of its missing Ingress for ever (under the generatingPolicy engine that repair is the only way back).
func testOrphanedRequestHoldsNoRepair(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-orphan")
	service, ing := settledCoder(t, ns)
	urs := env.dyn.Resource(devcluster.UpdateRequestGVR).Namespace(devcluster.KyvernoNamespace)
	orphan, err := urs.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kyverno.io/v2",
		"kind":       "UpdateRequest",
		"metadata":   map[string]any{"generateName": "ur-orphan-", "namespace": devcluster.KyvernoNamespace},
		"spec": map[string]any{
			"requestType": "generate", "policy": "virtual-ingress-generate", "rule": "", "deleteDownstream": false,
			"resource": map[string]any{"apiVersion": virtualIngressGVR.GroupVersion().String(), "kind": "VirtualIngress", "namespace": ns, "name": "coder"},
			"context":  map[string]any{"userInfo": map[string]any{}, "admissionRequestInfo": map[string]any{}},
		},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = urs.Delete(context.Background(), orphan.GetName(), metav1.DeleteOptions{}) })
	if err := env.kube.NetworkingV1().Ingresses(ns).Delete(ctx, ing.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	back := waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), service)
	if back.UID == ing.UID {
		t.Fatalf("the Ingress was never deleted (UID %s)", back.UID)
	}
	t.Logf("the Ingress came back %s after the orphaned request was created", time.Since(orphan.GetCreationTimestamp().Time).Round(time.Second))
}

// settledCoder is resolvedCoder once its VirtualIngress is Ready and Kyverno holds no request: a generation request
// still in Kyverno's queue (the touches resolution makes) would act on the Ingress before the status controller does,
// which is not what the tests that use it are about.
func settledCoder(t *testing.T, ns string) (service string, ing *networkingv1.Ingress) {
	t.Helper()
	service, ing = resolvedCoder(t, ns)
	waitReady(t, ns, "coder", "True", "IngressUpToDate")
	waitUpdateRequestsDrained(t)
	return service, ing
}
