package vdc_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/vdc"
)

// The row exists, PENDING, before Kubernetes is asked, and is READY once Kubernetes took the namespace.
func TestCreateWritesTheRowThenTheNamespace(t *testing.T) {
	e := newEnv(t)
	e.cluster.apply = func(v store.VDC) error {
		row, err := e.st.VDCByNamespace(t.Context(), v.Namespace)
		if err != nil || row.ID != v.ID || row.State != store.StatePending {
			t.Errorf("row when Kubernetes is asked: %+v, %v; want VDC %s, PENDING", row, err, v.ID)
		}
		return nil
	}
	v, err := e.svc.Create(t.Context(), e.org, spec("dev"))
	if err != nil {
		t.Fatal(err)
	}
	if v.State != store.StateReady || v.OrgID != e.org.ID || v.Namespace != "vdc-acme-dev" || v.MemoryMiB != 4096 {
		t.Fatalf("created %+v", v)
	}
	if len(e.cluster.applied) != 1 || e.cluster.applied[0].ID != v.ID {
		t.Fatalf("applied %+v, want VDC %s once", e.cluster.applied, v.ID)
	}
	got, err := e.st.GetVDC(t.Context(), store.Scope{}, v.ID)
	if err != nil || got.State != store.StateReady {
		t.Fatalf("stored %+v, %v; want READY", got, err)
	}
	if len(e.cluster.enqueued) != 0 {
		t.Fatalf("enqueued %v after a create Kubernetes took", e.cluster.enqueued)
	}
}

// With Kubernetes down the row is kept, PENDING, for the reconciler; Kubernetes is not asked.
func TestCreateKubernetesDownKeepsThePendingRow(t *testing.T) {
	e := newEnv(t)
	e.cluster.down = true
	v, err := e.svc.Create(t.Context(), e.org, spec("dev"))
	if err != nil {
		t.Fatal(err)
	}
	if v.State != store.StatePending {
		t.Fatalf("state %s, want PENDING", v.State)
	}
	if got, err := e.st.GetVDC(t.Context(), store.Scope{}, v.ID); err != nil || got.State != store.StatePending {
		t.Fatalf("stored %+v, %v; want PENDING", got, err)
	}
	if len(e.cluster.applied) != 0 {
		t.Fatalf("applied %v while Kubernetes is down", e.cluster.applied)
	}
}

// A failing apply rolls the row back, leaves a tombstone of its namespace and asks the reconciler to remove
// whatever part was made.
func TestCreateApplyFailsRollsBack(t *testing.T) {
	e := newEnv(t)
	e.cluster.apply = func(store.VDC) error { return errors.New("quota refused") }
	_, err := e.svc.Create(t.Context(), e.org, spec("dev"))
	wantKind(t, err, vdc.ErrUnavailable, "Kubernetes did not take the VDC's namespace, so the VDC was not created: quota refused")
	if vs := e.allVDCs(t); len(vs) != 0 {
		t.Fatalf("rows left: %+v", vs)
	}
	if ts := e.tombstones(t); !slices.Equal(ts, []string{"vdc-acme-dev"}) {
		t.Fatalf("tombstones %v, want [vdc-acme-dev]", ts)
	}
	if !slices.Equal(e.cluster.enqueued, []string{"vdc-acme-dev"}) {
		t.Fatalf("enqueued %v, want [vdc-acme-dev]", e.cluster.enqueued)
	}
	// The name is free again: the next create goes to another namespace name, which the tombstone does not hold.
	e.cluster.apply = nil
	v, err := e.svc.Create(t.Context(), e.org, spec("dev"))
	if err != nil || v.Namespace == "vdc-acme-dev" || v.State != store.StateReady {
		t.Fatalf("create after the rollback: %+v, %v", v, err)
	}
}

// When the rollback itself fails the row stays for the reconciler, nothing is enqueued, and the answer is still
// "unavailable" with the Kubernetes error.
func TestCreateRollbackFailsLeavesTheRow(t *testing.T) {
	e := newEnv(t)
	e.cluster.apply = func(store.VDC) error {
		_ = e.st.Close() // the database goes away between the apply and the rollback
		return errors.New("apply timed out")
	}
	_, err := e.svc.Create(t.Context(), e.org, spec("dev"))
	wantKind(t, err, vdc.ErrUnavailable, "Kubernetes did not take the VDC's namespace: apply timed out")
	if len(e.cluster.enqueued) != 0 {
		t.Fatalf("enqueued %v without a tombstone to act on", e.cluster.enqueued)
	}
}

// A namespace name that belongs to something else is never adopted: the create retries with another name, and
// each refused one is tombstoned.
func TestCreateNamespaceTakenRetriesWithAnotherName(t *testing.T) {
	e := newEnv(t)
	e.cluster.apply = func(v store.VDC) error {
		if len(e.cluster.applied) < 3 {
			return fmt.Errorf("%w: %s", kube.ErrNamespaceTaken, v.Namespace)
		}
		return nil
	}
	v, err := e.svc.Create(t.Context(), e.org, spec("dev"))
	if err != nil {
		t.Fatal(err)
	}
	tried := namespaces(e.cluster.applied)
	if len(tried) != 3 || tried[0] != "vdc-acme-dev" || tried[1] == tried[0] || tried[2] == tried[1] || tried[2] == tried[0] {
		t.Fatalf("namespaces tried %v, want three different ones starting with vdc-acme-dev", tried)
	}
	if v.Namespace != tried[2] || v.State != store.StateReady {
		t.Fatalf("created %+v, want READY in %s", v, tried[2])
	}
	if vs := e.allVDCs(t); len(vs) != 1 || vs[0].ID != v.ID {
		t.Fatalf("rows %+v, want only %s", vs, v.ID)
	}
	if ts := e.tombstones(t); !slices.Equal(ts, sorted(tried[:2])) {
		t.Fatalf("tombstones %v, want %v", ts, tried[:2])
	}
	if len(e.cluster.enqueued) != 0 {
		t.Fatalf("enqueued %v: nothing of ssvirt's was made in a taken namespace", e.cluster.enqueued)
	}
}

// Three taken names end the create with a conflict carrying Kubernetes' words.
func TestCreateNamespaceTakenGivesUpAfterThreeNames(t *testing.T) {
	e := newEnv(t)
	e.cluster.apply = func(v store.VDC) error { return fmt.Errorf("%w: %s", kube.ErrNamespaceTaken, v.Namespace) }
	_, err := e.svc.Create(t.Context(), e.org, spec("dev"))
	if len(e.cluster.applied) != 3 {
		t.Fatalf("%d applies, want 3", len(e.cluster.applied))
	}
	last := e.cluster.applied[2].Namespace
	wantKind(t, err, vdc.ErrNamespaceTaken, kube.ErrNamespaceTaken.Error()+": "+last)
	if !errors.Is(err, kube.ErrNamespaceTaken) {
		t.Fatalf("%v does not wrap kube.ErrNamespaceTaken", err)
	}
	if vs := e.allVDCs(t); len(vs) != 0 {
		t.Fatalf("rows left: %+v", vs)
	}
	if ts := e.tombstones(t); len(ts) != 3 {
		t.Fatalf("tombstones %v, want 3", ts)
	}
}

// A VDC name the organization already has is refused before Kubernetes is asked.
func TestCreateNameTaken(t *testing.T) {
	e := newEnv(t)
	if _, err := e.svc.Create(t.Context(), e.org, spec("dev")); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Create(t.Context(), e.org, spec("dev"))
	wantKind(t, err, vdc.ErrNameTaken, "the organization has a VDC named dev")
	if len(e.cluster.applied) != 1 {
		t.Fatalf("%d applies, want only the first create's", len(e.cluster.applied))
	}
}

func namespaces(vs []store.VDC) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Namespace)
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
