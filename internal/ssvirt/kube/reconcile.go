package kube

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// The VDC reconciler works on namespace names: a request is "make namespace N what the database says". Events
// on the namespace, its quota or its policy (all label-selected in the cache) and the periodic resync lead
// there.
func (k *Cluster) setupVDCController(mgr ctrl.Manager) error {
	byNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("vdc-namespaces").
		Watches(&corev1.Namespace{}, &handler.EnqueueRequestForObject{}).
		Watches(&corev1.ResourceQuota{}, byNamespace).
		Watches(&networkingv1.NetworkPolicy{}, byNamespace).
		WatchesRawSource(source.Channel(k.resync, &handler.TypedEnqueueRequestForObject[*corev1.Namespace]{})).
		Complete(reconcile.Func(k.reconcileNamespace))
}

func (k *Cluster) reconcileNamespace(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns := req.Name
	// Held from the database read to the last write: see namespaceLocks.
	defer k.namespaces.lock(ns)()
	v, err := k.store.VDCByNamespace(ctx, ns)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return k.reconcileUnowned(ctx, ns)
	case err != nil:
		return reconcile.Result{}, err
	case v.State == store.StateDeleting:
		gone, err := k.deleteNamespace(ctx, ns, v.ID)
		if err != nil {
			_ = k.store.NoteTask(ctx, v.ID, store.OpDeleteVDC, "deleting namespace "+ns+" (retried): "+err.Error())
			return reconcile.Result{}, err
		}
		if !gone {
			// Namespace deletion takes the namespace controller a while; no event reaches a label-selected
			// cache once the object is gone, so look again.
			return reconcile.Result{RequeueAfter: 2 * time.Second}, nil
		}
		if err := k.store.DeleteVDCRow(ctx, v.ID); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, k.store.FinishTasks(ctx, v.ID, store.OpDeleteVDC, store.TaskSuccess, "the namespace is gone")
	}
	if err := k.applyVDC(ctx, v); err != nil {
		_ = k.store.SetVDCState(ctx, v.ID, store.StatePending)
		if errors.Is(err, ErrNamespaceTaken) {
			k.log.Error(err, "VDC namespace cannot be made", "vdc", v.ID)
			return reconcile.Result{RequeueAfter: k.opts.ResyncPeriod}, nil
		}
		return reconcile.Result{}, err
	}
	if v.State != store.StateReady {
		return reconcile.Result{}, k.store.SetVDCState(ctx, v.ID, store.StateReady)
	}
	return reconcile.Result{}, nil
}

// reconcileUnowned handles a namespace no VDC row names: the remains of a rolled-back create (deleted), or an
// orphan (reported, never deleted: it may hold someone's workloads).
func (k *Cluster) reconcileUnowned(ctx context.Context, ns string) (reconcile.Result, error) {
	tombs, err := k.store.Tombstones(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	for _, t := range tombs {
		if t.Namespace != ns {
			continue
		}
		gone, err := k.deleteNamespace(ctx, ns, t.VDCID)
		if err != nil {
			return reconcile.Result{}, err
		}
		if !gone {
			return reconcile.Result{RequeueAfter: 2 * time.Second}, nil
		}
		return reconcile.Result{}, k.store.DeleteTombstone(ctx, ns)
	}
	var obj corev1.Namespace
	err = k.client.Get(ctx, client.ObjectKey{Name: ns}, &obj)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil || obj.DeletionTimestamp != nil {
		delete(k.orphans, ns)
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !k.orphans[ns] {
		k.log.Info("namespace labelled as ssvirt's belongs to no VDC; left alone", "namespace", ns,
			"vdcID", obj.Labels[LabelVDCID])
	}
	k.orphans[ns] = true
	return reconcile.Result{}, nil
}

// Resync queues every VDC's namespace, every tombstone and every namespace labelled as ssvirt's.
func (k *Cluster) Resync(ctx context.Context) {
	names := map[string]bool{}
	if vdcs, err := k.store.AllVDCs(ctx); err == nil {
		for _, v := range vdcs {
			names[v.Namespace] = true
		}
	} else {
		k.log.Error(err, "resync: reading VDCs")
	}
	if tombs, err := k.store.Tombstones(ctx); err == nil {
		for _, t := range tombs {
			names[t.Namespace] = true
		}
	}
	var list corev1.NamespaceList
	if err := k.client.List(ctx, &list); err == nil {
		for _, ns := range list.Items {
			names[ns.Name] = true
		}
	}
	for ns := range names {
		k.Enqueue(ns)
	}
}

// Enqueue asks the reconciler to look at namespace ns soon.
func (k *Cluster) Enqueue(ns string) {
	select {
	case k.resync <- event.TypedGenericEvent[*corev1.Namespace]{Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}}:
	default:
		// The queue is full: the next periodic resync brings the name back.
	}
}

func (k *Cluster) runResync(ctx context.Context) error {
	_ = wait.PollUntilContextCancel(ctx, k.opts.ResyncPeriod, false, func(ctx context.Context) (bool, error) {
		if k.Available() {
			k.Resync(ctx)
			k.endAbandonedInstantiations(ctx)
			k.sweepOrphanInstances(ctx)
		}
		return false, nil // until ctx ends
	})
	return nil
}
