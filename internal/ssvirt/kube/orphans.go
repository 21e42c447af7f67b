package kube

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// sweepOrphanInstances deletes the TemplateInstances ssvirt made whose vApp has no row: what a failed
// instantiation could not take back, or a row removed by hand. Their VMs are nobody's vApp, and nothing else would
// ever delete them. It cannot take a live instantiation's: a row is written before its TemplateInstance is
// created, and deleted only after its TemplateInstance (or once the instantiation failed). Only the namespaces of
// this database's VDCs are swept: another ssvirt-api on the same cluster, with a database of its own, labels its
// TemplateInstances the same way. The leader alone runs this, with the other reconcilers.
func (k *Cluster) sweepOrphanInstances(ctx context.Context) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(TemplateInstanceGVK.GroupVersion().WithKind(TemplateInstanceGVK.Kind + "List"))
	if err := k.client.List(ctx, list, client.MatchingLabels{LabelManagedBy: ManagedBy}); err != nil {
		k.log.Error(k.seen(err), "listing TemplateInstances for the orphan sweep")
		return
	}
	ours := map[string]bool{}
	for i := range list.Items {
		ti := &list.Items[i]
		id := ti.GetLabels()[LabelVAppID]
		if id == "" || ti.GetDeletionTimestamp() != nil {
			continue
		}
		ns := ti.GetNamespace()
		if _, seen := ours[ns]; !seen {
			_, err := k.store.VDCByNamespace(ctx, ns)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				k.log.Error(err, "reading the VDC of a namespace", "namespace", ns)
				continue
			}
			ours[ns] = err == nil
		}
		if !ours[ns] {
			continue
		}
		_, err := k.store.GetVApp(ctx, store.Scope{}, id)
		if !errors.Is(err, store.ErrNotFound) {
			if err != nil {
				k.log.Error(err, "reading the vApp of a TemplateInstance", "vapp", id)
			}
			continue
		}
		err = k.client.Delete(ctx, ti, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: ptr.To(ti.GetUID())})
		if client.IgnoreNotFound(err) != nil {
			k.log.Error(k.seen(err), "deleting a TemplateInstance whose vApp is gone", "namespace", ti.GetNamespace(), "name", ti.GetName())
			continue
		}
		k.log.Info("deleted a TemplateInstance whose vApp is gone", "namespace", ti.GetNamespace(), "name", ti.GetName(), "vapp", id)
	}
}
