package controller

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

// statusWriteFixture stores an AppsIngress, returns the copy a reconcile would start from (orig), then writes the
// status of an earlier reconcile the way the operator does: orig is then one write behind, as a cached copy is when
// an event queued the object again while that reconcile ran.
func statusWriteFixture(t *testing.T, earlier time.Time) (*Reconciler, client.Client, *v1alpha1.AppsIngress) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	stored := &v1alpha1.AppsIngress{ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "b001", Generation: 1}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).WithStatusSubresource(stored).Build()
	orig := &v1alpha1.AppsIngress{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(stored), orig); err != nil {
		t.Fatal(err)
	}
	ensureConditions(orig)
	written := orig.DeepCopy()
	meta.SetStatusCondition(&written.Status.Conditions, metav1.Condition{Type: CondExternalIPAssigned, Status: metav1.ConditionFalse,
		Reason: "ExternalIPPending", Message: "no IP yet", LastTransitionTime: metav1.NewTime(earlier)})
	meta.SetStatusCondition(&written.Status.Conditions, metav1.Condition{Type: CondServiceReady, Status: metav1.ConditionTrue,
		Reason: "Applied", Message: "applied", LastTransitionTime: metav1.NewTime(earlier)})
	written.Status.Phase, written.Status.Reason = v1alpha1.PhasePending, "ExternalIPPending"
	if err := c.Status().Update(context.Background(), written); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{client: c, live: c, now: time.Now}
	return r, c, orig
}

// A status write that conflicts because the reconcile started one write behind lands at once, rebased onto the API
// server's copy: what was observed is written, each condition's lastTransitionTime is that copy's when its status
// did not change there, and the object as it was before (for the Event) is the server's copy.
func TestAStatusWriteFromAStaleCopyIsRebasedOntoTheServersCopy(t *testing.T) {
	earlier := time.Now().Add(-time.Minute).Truncate(time.Second)
	r, c, orig := statusWriteFixture(t, earlier)
	next := orig.DeepCopy()
	next.Status.ObservedGeneration = 1
	setCondition(next, CondServiceReady, metav1.ConditionTrue, "Applied", "applied")
	setCondition(next, CondExternalIPAssigned, metav1.ConditionTrue, "Assigned", "127.20.0.1")
	setPhase(next, v1alpha1.PhaseReady, "Ready", "served")

	before, requeue, err := r.writeStatus(context.Background(), orig, next)
	if err != nil || requeue {
		t.Fatalf("writeStatus: requeue %v, error %v; want the status written", requeue, err)
	}
	if before.Status.Reason != "ExternalIPPending" {
		t.Errorf("the object before the write has reason %q, want the server's ExternalIPPending", before.Status.Reason)
	}
	got := &v1alpha1.AppsIngress{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(orig), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1alpha1.PhaseReady || got.Status.LastSyncTime == nil {
		t.Fatalf("stored phase %q, lastSyncTime %v; want Ready and a sync time", got.Status.Phase, got.Status.LastSyncTime)
	}
	if ltt := meta.FindStatusCondition(got.Status.Conditions, CondServiceReady).LastTransitionTime.Time; !ltt.Equal(earlier) {
		t.Errorf("ServiceReady, True before and after, moved its transition time to %s, want %s", ltt, earlier)
	}
	if ltt := meta.FindStatusCondition(got.Status.Conditions, CondExternalIPAssigned).LastTransitionTime.Time; !ltt.After(earlier) {
		t.Errorf("ExternalIPAssigned, False on the server and True now, kept the transition time %s", ltt)
	}
	if next.ResourceVersion != got.ResourceVersion {
		t.Errorf("next carries resourceVersion %s, want the written %s", next.ResourceVersion, got.ResourceVersion)
	}
}

// A status computed for a spec that has since changed is not written: the reconcile is repeated.
func TestAStatusForAnOldSpecIsNotRebased(t *testing.T) {
	r, c, orig := statusWriteFixture(t, time.Now().Add(-time.Minute))
	fresh := &v1alpha1.AppsIngress{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(orig), fresh); err != nil {
		t.Fatal(err)
	}
	fresh.Spec.ClusterName = "renamed"
	fresh.Generation = 2
	if err := c.Update(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}
	next := orig.DeepCopy()
	setPhase(next, v1alpha1.PhaseReady, "Ready", "served")
	if _, requeue, err := r.writeStatus(context.Background(), orig, next); err != nil || !requeue {
		t.Fatalf("writeStatus: requeue %v, error %v; want a requeue", requeue, err)
	}
	got := &v1alpha1.AppsIngress{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(orig), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase == v1alpha1.PhaseReady {
		t.Error("the status computed for generation 1 was written over generation 2")
	}
}
