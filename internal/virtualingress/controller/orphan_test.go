package controller

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestANewSourceIsLookedAtAgainWhenItsRequestBecomesAnOrphan: a resolved VirtualIngress never reported on, whose only
// UpdateRequest never got a state (Kyverno's admission Pod stopped in between), waits for PendingGrace only while that
// request may still be Kyverno's work. Nothing changes when it turns into an orphan, so no event comes: the
// reconciler must come back on its own then, and repair.
func TestANewSourceIsLookedAtAgainWhenItsRequestBecomesAnOrphan(t *testing.T) {
	now := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	clock := clocktesting.NewFakeClock(now)
	source := storedSource(t, virtualIngressKind, `
  ingress: {name: shop-generated, spec: {defaultBackend: {service: {name: svc-a, port: {number: 80}}}}}
  backends: [{field: spec.defaultBackend, service: svc-a, state: Resolved}]
  conditions:
  - {type: Resolved, status: "True", reason: Resolved, message: resolved}
`)
	source.SetUID("uid-shop")
	ur := newUpdateRequest()
	ur.SetNamespace("kyverno")
	ur.SetName("ur-stateless")
	ur.SetCreationTimestamp(metav1.NewTime(now.Add(-time.Second)))
	ur.Object["spec"] = map[string]any{"requestType": "generate",
		"resource": map[string]any{"kind": GVK.Kind, "namespace": "tenant", "name": "shop"}}
	cl := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(source, ur).
		WithIndex(newUpdateRequest(), triggerIndex, updateRequestTrigger).Build()
	r := &Reconciler{
		kind: virtualIngressKind, client: cl, recorder: events.NewFakeRecorder(10), clock: clock,
		opts:    defaulted(t, Options{Clock: clock}),
		copied:  newCopied(nil, nil),
		tracked: map[types.UID]*divergence{},
	}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "tenant", Name: "shop"}}
	rv := func() string {
		got := virtualIngressKind.newSource()
		if err := cl.Get(context.Background(), req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		return got.GetResourceVersion()
	}
	before := rv()

	res, err := r.Reconcile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := statelessOrphanAfter - time.Second; res.RequeueAfter != want {
		t.Fatalf("while the request may still be Kyverno's: requeue after %s, want %s (when it turns into an orphan)",
			res.RequeueAfter, want)
	}
	if rv() != before {
		t.Fatal("written while Kyverno may still generate the Ingress")
	}

	clock.Step(res.RequeueAfter)
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if rv() == before {
		t.Fatal("the VirtualIngress was not written (repaired) once its request turned into an orphan")
	}
}
