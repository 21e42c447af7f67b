package vdc_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/vdc"
)

func (e *env) task(t *testing.T, vdcID string) store.Task {
	t.Helper()
	task, err := e.st.LatestTask(t.Context(), vdcID, store.OpDeleteVDC)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// A namespace already gone ends the deletion at once: no row, the task ended in success, nothing for the
// reconciler. The task exists before Kubernetes is asked.
func TestDeleteNamespaceGoneFinishes(t *testing.T) {
	e := newEnv(t)
	v := e.ready(t)
	e.cluster.deleteNS = func(_, vdcID string) (bool, error) {
		if task, err := e.st.LatestTask(t.Context(), vdcID, store.OpDeleteVDC); err != nil || task.Status != store.TaskRunning {
			t.Errorf("task when Kubernetes is asked: %+v, %v; want one running", task, err)
		}
		return true, nil
	}
	d, err := e.svc.Delete(t.Context(), v)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Done || d.Task.ID == "" {
		t.Fatalf("deletion %+v, want done with a task", d)
	}
	if vs := e.allVDCs(t); len(vs) != 0 {
		t.Fatalf("rows left: %+v", vs)
	}
	if task := e.task(t, v.ID); task.ID != d.Task.ID || task.Status != store.TaskSuccess || task.Message != "the namespace is gone" {
		t.Fatalf("task %+v", task)
	}
	if !slices.Equal(e.cluster.deleted, []string{v.Namespace}) || len(e.cluster.enqueued) != 0 {
		t.Fatalf("deleted %v, enqueued %v", e.cluster.deleted, e.cluster.enqueued)
	}
}

// A namespace Kubernetes is still deleting, one whose delete failed, and one Kubernetes cannot be asked about all
// leave the deletion to the reconciler: the row stays, hidden, and the task runs.
func TestDeleteLeftToTheReconciler(t *testing.T) {
	for name, c := range map[string]fakeCluster{
		"deleting": {deleteNS: func(string, string) (bool, error) { return false, nil }},
		"failed":   {deleteNS: func(string, string) (bool, error) { return false, errors.New("timeout") }},
		"down":     {down: true},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			v := e.ready(t)
			*e.cluster = c
			d, err := e.svc.Delete(t.Context(), v)
			if err != nil {
				t.Fatal(err)
			}
			if d.Done || d.Task.ID == "" {
				t.Fatalf("deletion %+v, want a running task", d)
			}
			if _, err := e.st.GetVDC(t.Context(), store.Scope{}, v.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("the VDC is still visible: %v", err)
			}
			if row, err := e.st.VDCByNamespace(t.Context(), v.Namespace); err != nil || row.State != store.StateDeleting {
				t.Fatalf("row %+v, %v; want it kept, DELETING", row, err)
			}
			if task := e.task(t, v.ID); task.ID != d.Task.ID || task.Status != store.TaskRunning {
				t.Fatalf("task %+v, want %s running", task, d.Task.ID)
			}
			if !slices.Equal(e.cluster.enqueued, []string{v.Namespace}) {
				t.Fatalf("enqueued %v, want [%s]", e.cluster.enqueued, v.Namespace)
			}
			if c.down && len(e.cluster.deleted) != 0 {
				t.Fatalf("deleted %v while Kubernetes is down", e.cluster.deleted)
			}
		})
	}
}

// A VDC with vApps is refused before anything changes: no task, no namespace deletion, the VDC still visible.
func TestDeleteRefusedWhileVAppsRemain(t *testing.T) {
	e := newEnv(t)
	v := e.ready(t)
	if _, err := e.st.CreateVApp(t.Context(), store.VApp{OrgID: v.OrgID, VDCID: v.ID, Name: "web", Namespace: v.Namespace}); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Delete(t.Context(), v)
	wantKind(t, err, vdc.ErrHasVApps, "the VDC still has vApps: delete them first")
	if e.tasks.started != 0 || len(e.cluster.deleted) != 0 || len(e.cluster.enqueued) != 0 {
		t.Fatalf("tasks %d, deleted %v, enqueued %v", e.tasks.started, e.cluster.deleted, e.cluster.enqueued)
	}
	if got, err := e.st.GetVDC(t.Context(), store.Scope{}, v.ID); err != nil || got.State != store.StateReady {
		t.Fatalf("VDC after the refusal: %+v, %v", got, err)
	}
}
