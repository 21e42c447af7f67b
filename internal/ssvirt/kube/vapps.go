package kube

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// The vApp reconciler copies each TemplateInstance's conditions into its vApp's status, and ends the vApp's
// instantiation task when they say it ended.
func (k *Cluster) setupVAppController(mgr ctrl.Manager) error {
	ti := &unstructured.Unstructured{}
	ti.SetGroupVersionKind(TemplateInstanceGVK)
	return ctrl.NewControllerManagedBy(mgr).
		Named("vapp-status").
		For(ti).
		Complete(reconcile.Func(k.reconcileVApp))
}

func (k *Cluster) reconcileVApp(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ti := &unstructured.Unstructured{}
	ti.SetGroupVersionKind(TemplateInstanceGVK)
	if err := k.client.Get(ctx, req.NamespacedName, ti); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	id := ti.GetLabels()[LabelVAppID]
	if id == "" {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, k.followInstance(ctx, id, ti)
}

// followInstance records what vApp id's TemplateInstance says, and ends its instantiation task once it has ended.
func (k *Cluster) followInstance(ctx context.Context, id string, ti *unstructured.Unstructured) error {
	status, message := VAppStatus(ti)
	if err := k.store.SetVAppStatus(ctx, id, status, message); err != nil {
		return err
	}
	switch status {
	case store.VAppDeployed:
		return k.store.FinishTasks(ctx, id, store.OpInstantiate, store.TaskSuccess, "the TemplateInstance is Ready")
	case store.VAppFailed:
		if message == "" {
			message = "the TemplateInstance reports InstantiateFailure"
		}
		return k.store.FinishTasks(ctx, id, store.OpInstantiate, store.TaskError, message)
	}
	return nil
}

// VAppStatus reads a TemplateInstance's conditions: Ready=True is deployed, InstantiateFailure=True failed
// (with the controller's message), anything else still instantiating.
func VAppStatus(ti *unstructured.Unstructured) (status, message string) {
	conds, _, _ := unstructured.NestedSlice(ti.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["status"] != "True" {
			continue
		}
		msg, _ := m["message"].(string)
		switch m["type"] {
		case "InstantiateFailure":
			return store.VAppFailed, msg
		case "Ready":
			return store.VAppDeployed, msg
		}
	}
	return store.VAppInstantiating, ""
}
