package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Power actions change a VM's spec.runStrategy and are tasks that end when KubeVirt's status says so: power on
// when the VM is Running and ready, power off when it is Stopped, each for the generation the action wrote. A
// reset is a halt and then a start, because KubeVirt's restart is a subresource of its aggregated API server
// (subresources.kubevirt.io), which ssvirt-api does not depend on: the task stops the VM, waits for Stopped,
// starts it and waits for Running and ready. A task that has not ended by its deadline ends in error.

// PowerDeadline is when a power action started now ends in error if nothing has ended it.
func (k *Cluster) PowerDeadline() time.Time { return time.Now().Add(k.opts.PowerTimeout) }

// StartPower writes the run strategy task's operation asks for (Halted for off and reset, Always for on) and arms
// the task, which must be in StepPatching; the task may end at once when the VM already reports the state asked
// for. It returns the error Kubernetes gave (the task is then ended with it).
func (k *Cluster) StartPower(ctx context.Context, task store.Task, vm VM) error {
	strategy, step := RunStrategyHalted, store.StepWaiting
	switch task.Operation {
	case store.OpPowerOn:
		strategy = RunStrategyAlways
	case store.OpReset:
		step = store.StepHalting
	}
	patched, err := k.setRunStrategy(ctx, vm, strategy, false)
	if err != nil {
		err = k.seen(fmt.Errorf("setting VirtualMachine %s/%s's run strategy to %s: %w", vm.Namespace, vm.Name, strategy, err))
		if fErr := k.store.FinishTask(ctx, task.ID, store.TaskError, err.Error()); fErr != nil {
			k.log.Error(fErr, "ending a power task", "task", task.ID)
		}
		return err
	}
	if _, err := k.store.AdvanceTask(ctx, task.ID, store.StepPatching, step, patched.Generation); err != nil {
		return err // the VM has its run strategy; the task, stuck in StepPatching, ends at its deadline
	}
	// The VM's status may have changed before the reconciler could find the task (or may never change: powering on
	// a running VM changes nothing): look once now, at the VM as the API server has it. Whatever happens later is
	// the reconciler's.
	if err := k.advanceNow(ctx, task.ID, vm); err != nil && !apierrors.IsConflict(err) {
		k.log.Error(err, "advancing a power task; the reconciler retries", "task", task.ID)
	}
	return nil
}

// advanceNow takes the next step of task id on vm as the API server has it now.
func (k *Cluster) advanceNow(ctx context.Context, id string, vm VM) error {
	task, err := k.store.GetTask(ctx, store.Scope{}, id)
	if err != nil || task.Status != store.TaskRunning {
		return err
	}
	fresh := newVM()
	if err := k.reader.Get(ctx, types.NamespacedName{Namespace: vm.Namespace, Name: vm.Name}, fresh); err != nil {
		return client.IgnoreNotFound(err)
	}
	return k.advance(ctx, task, vmOf(fresh))
}

// advance takes the next step of a running power task on vm. Each step is taken once however many processes see
// it (store.AdvanceTask), and a task whose VM someone else has since given another run strategy ends in error.
func (k *Cluster) advance(ctx context.Context, t store.Task, vm VM) error {
	if vm.UID != t.OwnerID {
		return nil
	}
	if vm.Generation < t.TargetGeneration {
		// A view older than the task's own patch (an informer's cache lags the API server, and an earlier action's
		// run strategy may still be in it): it says nothing of this task, whose own patch is yet to be seen.
		return nil
	}
	switch t.Step {
	case store.StepWaiting:
		on := t.Operation == store.OpPowerOn
		if want := strategyFor(on); vm.RunStrategy != want {
			return k.store.FinishTask(ctx, t.ID, store.TaskError, changedUnder(vm))
		}
		if vm.Reports(on, t.TargetGeneration) {
			return k.store.FinishTask(ctx, t.ID, store.TaskSuccess, "the VM reports "+vm.PrintableStatus+readiness(vm))
		}
	case store.StepHalting:
		if vm.RunStrategy != RunStrategyHalted {
			return k.store.FinishTask(ctx, t.ID, store.TaskError, changedUnder(vm))
		}
		if !vm.Reports(false, t.TargetGeneration) {
			return nil
		}
		if ok, err := k.store.AdvanceTask(ctx, t.ID, store.StepHalting, store.StepStarting, vm.Generation); !ok || err != nil {
			return err
		}
		return k.start(ctx, t.ID, vm)
	case store.StepStarting:
		switch {
		case vm.RunStrategy == RunStrategyAlways:
			if vm.Reports(true, t.TargetGeneration) {
				return k.store.FinishTask(ctx, t.ID, store.TaskSuccess, "the VM stopped and reports Running and ready again")
			}
		case vm.Generation == t.TargetGeneration:
			// The step was taken but its start was not written (the process stopped, or Kubernetes refused it).
			return k.start(ctx, t.ID, vm)
		default:
			return k.store.FinishTask(ctx, t.ID, store.TaskError, changedUnder(vm))
		}
	}
	return nil
}

// start is a reset's second half: the VM as read is given Always, unless it has changed since it was read.
func (k *Cluster) start(ctx context.Context, id string, vm VM) error {
	patched, err := k.setRunStrategy(ctx, vm, RunStrategyAlways, true)
	if err != nil {
		return err
	}
	_, err = k.store.AdvanceTask(ctx, id, store.StepStarting, store.StepStarting, patched.Generation)
	return err
}

func strategyFor(on bool) string {
	if on {
		return RunStrategyAlways
	}
	return RunStrategyHalted
}

func changedUnder(vm VM) string {
	return "the VM's run strategy was changed to " + vm.RunStrategy + " while the action ran"
}

func readiness(vm VM) string {
	if vm.Ready {
		return " and ready"
	}
	return ""
}

// setRunStrategy writes spec.runStrategy (and removes spec.running, which KubeVirt refuses beside it) on the VM
// with vm's UID; with locked, only if the VM is still at vm's resourceVersion.
func (k *Cluster) setRunStrategy(ctx context.Context, vm VM, strategy string, locked bool) (VM, error) {
	meta := map[string]any{"uid": vm.UID}
	if locked {
		meta["resourceVersion"] = vm.ResourceVersion
	}
	patch, err := json.Marshal(map[string]any{"metadata": meta, "spec": map[string]any{"running": nil, "runStrategy": strategy}})
	if err != nil {
		return VM{}, err
	}
	u := newVM()
	u.SetNamespace(vm.Namespace)
	u.SetName(vm.Name)
	if err := k.client.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldOwner)); err != nil {
		return VM{}, err
	}
	return vmOf(u), nil
}

// setupPowerController advances the power tasks of a VM whenever the VM changes.
func (k *Cluster) setupPowerController(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("vm-power").
		For(newVM()).
		Complete(reconcile.Func(k.reconcileVM))
}

func (k *Cluster) reconcileVM(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	// Only VDC namespaces hold vApps' VMs (the namespace cache holds only those).
	if err := k.client.Get(ctx, client.ObjectKey{Name: req.Namespace}, &corev1.Namespace{}); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	u := newVM()
	if err := k.client.Get(ctx, req.NamespacedName, u); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	tasks, err := k.store.RunningTasks(ctx, string(u.GetUID()))
	if err != nil {
		return reconcile.Result{}, err
	}
	vm := vmOf(u)
	for _, t := range tasks {
		if !slices.Contains(store.PowerOperations, t.Operation) {
			continue
		}
		if err := k.advance(ctx, t, vm); err != nil {
			if apierrors.IsConflict(err) {
				// The VM changed since the cache saw it: look again once the cache has the change.
				return reconcile.Result{RequeueAfter: time.Second}, nil
			}
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// runDeadlines ends the tasks that are running past their deadline, every second, until ctx ends.
func (k *Cluster) runDeadlines(ctx context.Context) error {
	_ = wait.PollUntilContextCancel(ctx, time.Second, false, func(ctx context.Context) (bool, error) {
		if err := k.expireTasks(ctx); err != nil && ctx.Err() == nil {
			k.log.Error(err, "ending tasks past their deadline")
		}
		return false, nil // until ctx ends
	})
	return nil
}

func (k *Cluster) expireTasks(ctx context.Context) error {
	tasks, err := k.store.ExpiredTasks(ctx, time.Now())
	if err != nil {
		return err
	}
	for _, t := range tasks {
		msg := fmt.Sprintf("%s did not end within %s", t.Operation, t.Deadline.Sub(t.CreatedAt).Round(time.Second))
		if u, err := k.cachedVM(ctx, t.OwnerID); err == nil {
			vm := vmOf(u)
			msg += fmt.Sprintf(": the VM reports %q%s for generation %d of %d", vm.PrintableStatus, readiness(vm),
				vm.ObservedGeneration, vm.Generation)
		} else if slices.Contains(store.PowerOperations, t.Operation) {
			msg += ": the VM is gone"
		}
		if err := k.store.FinishTask(ctx, t.ID, store.TaskError, msg); err != nil {
			return err
		}
	}
	return nil
}
