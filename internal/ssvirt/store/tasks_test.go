package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Tasks that run in steps: a step is taken once however many processes try it, a superseded or ended task takes
// no step, and only running tasks past their deadline are expired.
func TestTaskSteps(t *testing.T) {
	eachDB(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		org := mustOrg(t, s, "acme")
		newTask := func(op, owner string, deadline time.Time) store.Task {
			t.Helper()
			task, err := s.CreateTask(ctx, store.Task{OrgID: org.ID, Operation: op, OwnerKind: "vm", OwnerID: owner, OwnerName: "vm",
				UserID: "u", UserName: "user", Message: op, Step: store.StepPatching, Deadline: deadline})
			if err != nil {
				t.Fatal(err)
			}
			return task
		}
		soon := time.Now().Add(time.Hour)
		reset := newTask(store.OpReset, "vm-1", soon)
		got, err := s.GetTask(ctx, store.Scope{OrgID: org.ID}, reset.ID)
		if err != nil || got.Step != store.StepPatching || got.Deadline.UnixMilli() != soon.UnixMilli() {
			t.Fatalf("created task: %+v, %v", got, err)
		}
		if ok, err := s.AdvanceTask(ctx, reset.ID, store.StepHalting, store.StepStarting, 7); ok || err != nil {
			t.Errorf("advanced from a step the task is not in: %v %v", ok, err)
		}
		if ok, err := s.AdvanceTask(ctx, reset.ID, store.StepPatching, store.StepHalting, 3); !ok || err != nil {
			t.Fatalf("advance: %v %v", ok, err)
		}
		wins := 0
		for range 3 {
			if ok, _ := s.AdvanceTask(ctx, reset.ID, store.StepHalting, store.StepStarting, 4); ok {
				wins++
			}
		}
		if wins != 1 {
			t.Errorf("the step was taken %d times, want once", wins)
		}
		got, _ = s.GetTask(ctx, store.Scope{}, reset.ID)
		if got.Step != store.StepStarting || got.TargetGeneration != 4 {
			t.Errorf("after the steps: %+v", got)
		}

		other := newTask(store.OpPowerOn, "vm-2", time.Time{})
		running, err := s.RunningTasks(ctx, "vm-1")
		if err != nil || len(running) != 1 || running[0].ID != reset.ID {
			t.Fatalf("running tasks of vm-1: %+v, %v", running, err)
		}
		if err := s.SupersedeTasks(ctx, "vm-1", store.PowerOperations, "superseded"); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetTask(ctx, store.Scope{}, reset.ID)
		if got.Status != store.TaskError || got.Message != "superseded" || got.EndedAt.IsZero() {
			t.Errorf("superseded task: %+v", got)
		}
		if ok, _ := s.AdvanceTask(ctx, reset.ID, store.StepStarting, store.StepWaiting, 5); ok {
			t.Error("an ended task took a step")
		}
		if running, _ = s.RunningTasks(ctx, "vm-2"); len(running) != 1 || running[0].ID != other.ID {
			t.Errorf("another VM's task: %+v", running)
		}

		late := newTask(store.OpPowerOff, "vm-3", time.Now().Add(-time.Second))
		expired, err := s.ExpiredTasks(ctx, time.Now())
		if err != nil || len(expired) != 1 || expired[0].ID != late.ID {
			t.Errorf("expired: %+v, %v (a task without a deadline never expires)", expired, err)
		}
		_ = s.FinishTask(ctx, late.ID, store.TaskSuccess, "done")
		if expired, _ = s.ExpiredTasks(ctx, time.Now()); len(expired) != 0 {
			t.Errorf("an ended task expired: %+v", expired)
		}
	})
}

// A vApp left instantiating by a process that stopped is found once old enough, and abandoning it removes the row
// and ends its task in error, once: a vApp that got further, or another process that abandons it too, changes
// nothing.
func TestAbandonVApp(t *testing.T) {
	eachDB(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		org := mustOrg(t, s, "acme")
		vdc := mustVDC(t, s, org, "web")
		newVApp := func(name string) (store.VApp, store.Task) {
			t.Helper()
			a, err := s.CreateVApp(ctx, store.VApp{OrgID: org.ID, VDCID: vdc.ID, Name: name, Namespace: vdc.Namespace})
			if err != nil {
				t.Fatal(err)
			}
			task, err := s.CreateTask(ctx, store.Task{OrgID: org.ID, Operation: store.OpInstantiate, OwnerKind: "vapp", OwnerID: a.ID,
				OwnerName: name, UserID: "u", UserName: "user", Message: "instantiate"})
			if err != nil {
				t.Fatal(err)
			}
			return a, task
		}
		left, leftTask := newVApp("left")
		deployed, deployedTask := newVApp("deployed")
		if err := s.SetVAppStatus(ctx, deployed.ID, store.VAppDeployed, ""); err != nil {
			t.Fatal(err)
		}
		if old, err := s.InstantiatingSince(ctx, time.Now().Add(-time.Hour)); err != nil || len(old) != 0 {
			t.Errorf("vApps instantiating for an hour: %+v, %v", old, err)
		}
		old, err := s.InstantiatingSince(ctx, time.Now().Add(time.Second))
		if err != nil || len(old) != 1 || old[0].ID != left.ID {
			t.Fatalf("vApps instantiating now: %+v, %v", old, err)
		}
		for i, want := range []bool{true, false} {
			if ok, err := s.AbandonVApp(ctx, left.ID, "the process stopped"); ok != want || err != nil {
				t.Errorf("abandon #%d: %v %v, want %v", i+1, ok, err, want)
			}
		}
		if ok, err := s.AbandonVApp(ctx, deployed.ID, "no"); ok || err != nil {
			t.Errorf("abandoned a deployed vApp: %v %v", ok, err)
		}
		if _, err := s.GetVApp(ctx, store.Scope{}, left.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("abandoned vApp still read: %v", err)
		}
		got, _ := s.GetTask(ctx, store.Scope{}, leftTask.ID)
		if got.Status != store.TaskError || got.Message != "the process stopped" || got.EndedAt.IsZero() {
			t.Errorf("abandoned vApp's task: %+v", got)
		}
		if got, _ := s.GetTask(ctx, store.Scope{}, deployedTask.ID); got.Status != store.TaskRunning {
			t.Errorf("a deployed vApp's task ended: %+v", got)
		}
	})
}
