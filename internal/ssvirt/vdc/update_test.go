package vdc_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/vdc"
)

func changed() vdc.Settings {
	return vdc.Settings{Description: "bigger", Enabled: false, CPUMillicores: 4000, MemoryMiB: 8192, StorageGiB: 20}
}

func (e *env) ready(t *testing.T) store.VDC {
	t.Helper()
	v, err := e.svc.Create(t.Context(), e.org, spec("dev"))
	if err != nil {
		t.Fatal(err)
	}
	e.cluster.applied = nil
	return v
}

// The change reaches the database first, PENDING, then Kubernetes; READY once Kubernetes took it.
func TestUpdateAppliesTheChange(t *testing.T) {
	e := newEnv(t)
	cur := e.ready(t)
	e.cluster.apply = func(v store.VDC) error {
		row, err := e.st.GetVDC(t.Context(), store.Scope{}, v.ID)
		if err != nil || row.State != store.StatePending || row.MemoryMiB != 8192 {
			t.Errorf("row when Kubernetes is asked: %+v, %v; want the change, PENDING", row, err)
		}
		return nil
	}
	v, err := e.svc.Update(t.Context(), cur, changed())
	if err != nil {
		t.Fatal(err)
	}
	if v.State != store.StateReady || v.Description != "bigger" || v.Enabled || v.CPUMillicores != 4000 || v.StorageGiB != 20 {
		t.Fatalf("updated %+v", v)
	}
	if len(e.cluster.applied) != 1 || e.cluster.applied[0].MemoryMiB != 8192 || e.cluster.applied[0].Namespace != cur.Namespace {
		t.Fatalf("applied %+v", e.cluster.applied)
	}
	if got, err := e.st.GetVDC(t.Context(), store.Scope{}, cur.ID); err != nil || got.State != store.StateReady || got.MemoryMiB != 8192 {
		t.Fatalf("stored %+v, %v", got, err)
	}
}

// A change Kubernetes refuses is undone in the database (as PENDING, for the reconciler to put the namespace back
// in line) and the caller gets the VDC as it was.
func TestUpdateApplyFailsCompensates(t *testing.T) {
	e := newEnv(t)
	cur := e.ready(t)
	e.cluster.apply = func(store.VDC) error { return errors.New("quota refused") }
	v, err := e.svc.Update(t.Context(), cur, changed())
	wantKind(t, err, vdc.ErrUnavailable, "Kubernetes did not take the change, so the VDC was left as it was: quota refused")
	if v.MemoryMiB != cur.MemoryMiB || v.Description != cur.Description {
		t.Fatalf("returned %+v, want the VDC as it was", v)
	}
	got, err := e.st.GetVDC(t.Context(), store.Scope{}, cur.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.MemoryMiB != 4096 || got.Description != "d" || !got.Enabled || got.State != store.StatePending {
		t.Fatalf("stored %+v, want the old settings, PENDING", got)
	}
	if !slices.Equal(e.cluster.enqueued, []string{cur.Namespace}) {
		t.Fatalf("enqueued %v, want [%s]", e.cluster.enqueued, cur.Namespace)
	}
}

// With Kubernetes down the change is stored, PENDING, and left to the reconciler.
func TestUpdateKubernetesDownStoresPending(t *testing.T) {
	e := newEnv(t)
	cur := e.ready(t)
	e.cluster.down = true
	v, err := e.svc.Update(t.Context(), cur, changed())
	if err != nil {
		t.Fatal(err)
	}
	if v.State != store.StatePending || v.MemoryMiB != 8192 {
		t.Fatalf("updated %+v, want the change, PENDING", v)
	}
	if got, err := e.st.GetVDC(t.Context(), store.Scope{}, cur.ID); err != nil || got.State != store.StatePending || got.MemoryMiB != 8192 {
		t.Fatalf("stored %+v, %v", got, err)
	}
	if len(e.cluster.applied) != 0 {
		t.Fatalf("applied %v while Kubernetes is down", e.cluster.applied)
	}
}
