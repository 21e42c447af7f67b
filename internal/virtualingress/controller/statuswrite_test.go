package controller

import (
	"context"
	"reflect"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"
)

// storedSource is a source as the API server returns it, with the status the policies and an earlier write left.
func storedSource(t *testing.T, kind *sourceKind, status string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte("apiVersion: " + kind.gvk.GroupVersion().String() + "\nkind: " + kind.gvk.Kind +
		"\nstatus:\n" + status))
	if err != nil {
		t.Fatal(err)
	}
	u := kind.newSource()
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace("tenant")
	u.SetName("shop")
	return u
}

// written writes v as the reconciler does, from what it read, and returns the status stored after.
func written(t *testing.T, kind *sourceKind, stored *unstructured.Unstructured, v verdict, parents []parent, note string,
	now time.Time,
) (map[string]any, error) {
	t.Helper()
	cl := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(stored).Build()
	r := &Reconciler{kind: kind, client: cl}
	read := kind.newSource()
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(stored), read); err != nil {
		t.Fatal(err)
	}
	vi, err := kind.decode(read)
	if err != nil {
		t.Fatal(err)
	}
	// Someone else writes in between.
	if note == "conflict" {
		bump := read.DeepCopy()
		bump.SetLabels(map[string]string{"touched": "yes"})
		if err := cl.Update(context.Background(), bump); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.write(context.Background(), read, vi, v, parents, note, now); err != nil {
		return nil, err
	}
	after := kind.newSource()
	if err := cl.Get(context.Background(), types.NamespacedName{Namespace: "tenant", Name: "shop"}, after); err != nil {
		t.Fatal(err)
	}
	status, _, _ := unstructured.NestedMap(after.Object, "status")
	return status, nil
}

func TestWriteReplacesTheReadyConditionAndLeavesThePoliciesStatus(t *testing.T) {
	const status = `
  ingress: {name: shop-generated, spec: {defaultBackend: {service: {name: svc-a, port: {number: 80}}}}}
  backends: [{field: spec.defaultBackend, service: svc-a, state: Resolved}]
  lastServiceEvent: CREATE svc-a
  conditions:
  - {type: Ready, status: "True", reason: IngressUpToDate, message: up to date, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: Resolved, status: "True", reason: Resolved, message: resolved}
`
	now := time.Date(2026, 2, 3, 4, 5, 6, 7, time.UTC)
	missing := verdict{status: "False", reason: ReasonMissing, message: "Ingress shop-generated does not exist"}
	got, err := written(t, virtualIngressKind, storedSource(t, virtualIngressKind, status), missing, nil, "", now)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"ingress": map[string]any{"name": "shop-generated", "spec": map[string]any{"defaultBackend": map[string]any{
			"service": map[string]any{"name": "svc-a", "port": map[string]any{"number": int64(80)}}}}},
		"backends":         []any{map[string]any{"field": "spec.defaultBackend", "service": "svc-a", "state": "Resolved"}},
		"lastServiceEvent": "CREATE svc-a",
		"conditions": []any{
			map[string]any{"type": "Resolved", "status": "True", "reason": "Resolved", "message": "resolved"},
			map[string]any{"type": "Ready", "status": "False", "reason": ReasonMissing, "message": "Ingress shop-generated does not exist",
				"lastTransitionTime": "2026-02-03T04:05:06Z"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("status after a report:\n got %v\nwant %v", got, want)
	}

	// A repair with the Ready status unchanged keeps its transition time and notes why in status.lastServiceEvent.
	upToDate := verdict{status: "True", reason: ReasonUpToDate, message: "up to date"}
	got, err = written(t, virtualIngressKind, storedSource(t, virtualIngressKind, status), upToDate, nil, "a note", now)
	if err != nil {
		t.Fatal(err)
	}
	conditions := got["conditions"].([]any)
	if ready := conditions[len(conditions)-1].(map[string]any); ready["lastTransitionTime"] != "2026-01-01T00:00:00Z" {
		t.Errorf("Ready after a repair: %v, want the transition time it had", ready)
	}
	if got["lastServiceEvent"] != "repair at 2026-02-03T04:05:06Z: a note" {
		t.Errorf("lastServiceEvent after a repair: %v", got["lastServiceEvent"])
	}

	// A write from an outdated read is refused.
	if _, err := written(t, virtualIngressKind, storedSource(t, virtualIngressKind, status), missing, nil, "conflict", now); !apierrors.IsConflict(err) {
		t.Errorf("a write after another: %v, want a conflict", err)
	}
}

// A route's status.parents is replaced whole, by an empty list too.
func TestWriteReplacesARoutesParents(t *testing.T) {
	const status = `
  route: {name: shop-generated, spec: {parentRefs: [{name: gw}]}}
  parents: [{parentRef: tenant/gw, accepted: "True", resolvedRefs: "True"}]
  conditions: [{type: Resolved, status: "True", reason: Resolved, message: resolved}]
`
	v := verdict{status: "False", reason: "HTTPRouteMissing", message: "HTTPRoute shop-generated does not exist"}
	got, err := written(t, virtualHTTPRouteKind, storedSource(t, virtualHTTPRouteKind, status), v, []parent{}, "", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if parents, ok := got["parents"].([]any); !ok || len(parents) != 0 {
		t.Fatalf("parents after a write of none: %#v, want an empty list", got["parents"])
	}
	if _, has := got["route"]; !has {
		t.Errorf("status.route gone after the write: %v", got)
	}
}
