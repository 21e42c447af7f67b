package kube

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// ErrNamespaceTaken: a namespace of the VDC's name exists and is not this VDC's; it is never adopted or deleted.
var ErrNamespaceTaken = errors.New("namespace exists and belongs to something else")

// ApplyVDC creates or updates the VDC's namespace, quota and policy (server-side apply, forced: what ssvirt-api
// owns is put back as the database says). A connection failure marks Kubernetes unavailable at once, so that
// the API's next requests take the "Kubernetes is down" path until the probe sees it again.
func (k *Cluster) ApplyVDC(ctx context.Context, v store.VDC) error {
	defer k.namespaces.lock(v.Namespace)()
	return k.seen(k.applyVDC(ctx, v))
}

// DeleteNamespace deletes the namespace of VDC vdcID and says whether it is gone; see deleteNamespace.
func (k *Cluster) DeleteNamespace(ctx context.Context, name, vdcID string) (bool, error) {
	defer k.namespaces.lock(name)()
	gone, err := k.deleteNamespace(ctx, name, vdcID)
	return gone, k.seen(err)
}

// applyVDC is ApplyVDC for the reconciler, whose failures are retried and do not change what the API believes.
func (k *Cluster) applyVDC(ctx context.Context, v store.VDC) error {
	var ns corev1.Namespace
	err := k.reader.Get(ctx, client.ObjectKey{Name: v.Namespace}, &ns)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	case ns.Labels[LabelVDCID] != v.ID && ns.Labels[LabelVDCID] != "":
		return fmt.Errorf("%w: %s is VDC %s's", ErrNamespaceTaken, v.Namespace, ns.Labels[LabelVDCID])
	case ns.Labels[LabelVDCID] == "" && ns.Labels[LabelManagedBy] != ManagedBy:
		return fmt.Errorf("%w: %s", ErrNamespaceTaken, v.Namespace)
	case ns.DeletionTimestamp != nil:
		return fmt.Errorf("namespace %s is being deleted; it is made again once it is gone", v.Namespace)
	}
	opts := []client.ApplyOption{client.FieldOwner(FieldOwner), client.ForceOwnership}
	if err := k.client.Apply(ctx, namespaceApply(v), opts...); err != nil {
		return fmt.Errorf("namespace %s: %w", v.Namespace, err)
	}
	if err := k.client.Apply(ctx, quotaApply(v), opts...); err != nil {
		return fmt.Errorf("resource quota %s/%s: %w", v.Namespace, QuotaName, err)
	}
	if err := k.client.Apply(ctx, policyApply(v), opts...); err != nil {
		return fmt.Errorf("network policy %s/%s: %w", v.Namespace, PolicyName, err)
	}
	return nil
}

// deleteNamespace deletes the namespace of VDC vdcID and says whether it is gone. A namespace that is not
// that VDC's is left alone and counts as gone (there is nothing of the VDC's to delete).
func (k *Cluster) deleteNamespace(ctx context.Context, name, vdcID string) (gone bool, err error) {
	var ns corev1.Namespace
	err = k.reader.Get(ctx, client.ObjectKey{Name: name}, &ns)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if ns.Labels[LabelVDCID] != vdcID {
		return true, nil
	}
	if ns.DeletionTimestamp == nil {
		if err := k.client.Delete(ctx, &ns, client.Preconditions{UID: &ns.UID}); err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
	}
	return false, nil
}
