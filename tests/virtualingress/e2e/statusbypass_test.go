//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// testNoTakeoverThroughStatus: a write through the status subresource that gives another team's object a controlling
// ownerReference to a source is a takeover too (for an Ingress the API server keeps metadata changed through
// ingresses/status; garbage collection would delete the object with the source). The object must end without it.
func testNoTakeoverThroughStatus(k takeoverKind) func(*testing.T) {
	return func(t *testing.T) {
		dumpKyvernoLogsOnFailure(t)
		ns := newNamespace(t, "e2e-status-bypass")
		createSource(t, k, k.newSource(ns, "hold", relayLabels()))
		src, err := env.dyn.Resource(k.sourceGVR).Namespace(ns).Get(context.Background(), "hold", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		theirs := createTheirs(t, k, ns)
		patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":%q,"kind":%q,"name":"hold","uid":%q,"controller":true}]}}`,
			src.GetAPIVersion(), src.GetKind(), src.GetUID())
		_, err = env.dyn.Resource(k.generatedGVR).Namespace(ns).Patch(context.Background(), theirs.GetName(), types.MergePatchType,
			[]byte(patch), metav1.PatchOptions{}, "status")
		now, getErr := env.dyn.Resource(k.generatedGVR).Namespace(ns).Get(context.Background(), theirs.GetName(), metav1.GetOptions{})
		if getErr != nil {
			t.Fatal(getErr)
		}
		if refs := now.GetOwnerReferences(); len(refs) != 0 {
			t.Fatalf("the status write (error %v) gave the other team's %s owners %v", err, k.generated, refs)
		}
		t.Logf("status write: %v", err)
	}
}
