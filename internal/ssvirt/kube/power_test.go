package kube

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// A power task whose own patch wrote generation 5 ignores a VM seen at generation 4 (a lagging cache still holding
// an earlier action's run strategy) and ends only on what a view of its own generation says.
func TestPowerTaskIgnoresAViewOlderThanItsPatch(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite", filepath.Join(t.TempDir(), "ssvirt.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	k := &Cluster{store: st}
	task, err := st.CreateTask(ctx, store.Task{Operation: store.OpPowerOn, OwnerKind: naming.KindVM, OwnerID: "uid-1", OwnerName: "vm-1",
		UserID: "u", UserName: "u", Message: "powerOn vm-1", Step: store.StepPatching})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := st.AdvanceTask(ctx, task.ID, store.StepPatching, store.StepWaiting, 5); !ok || err != nil {
		t.Fatalf("advancing: %v %v", ok, err)
	}
	status := func() string {
		t.Helper()
		got, err := st.GetTask(ctx, store.Scope{}, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}
	running, _ := st.GetTask(ctx, store.Scope{}, task.ID)
	stale := VM{UID: "uid-1", RunStrategy: RunStrategyHalted, PrintableStatus: "Stopped", Generation: 4, ObservedGeneration: 4}
	if err := k.advance(ctx, running, stale); err != nil || status() != store.TaskRunning {
		t.Fatalf("a view older than the task's patch ended it: %v, %s", err, status())
	}
	current := VM{UID: "uid-1", RunStrategy: RunStrategyAlways, PrintableStatus: "Running", Ready: true, Generation: 5, ObservedGeneration: 5}
	if err := k.advance(ctx, running, current); err != nil || status() != store.TaskSuccess {
		t.Fatalf("the view of its own generation did not end it: %v, %s", err, status())
	}
}
