package vdc

import (
	"context"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Update writes set to VDC cur in the database, then in Kubernetes. When Kubernetes refuses, the row is put back
// as it was (compensation), as PENDING, and the reconciler brings the namespace back in line with it; the error
// is ErrUnavailable and the VDC returned is cur. With Kubernetes known to be unreachable the row changes and
// stays PENDING until the reconciler has applied it.
func (s *Service) Update(ctx context.Context, cur store.VDC, set Settings) (store.VDC, error) {
	next := cur
	next.Description, next.Enabled = set.Description, set.Enabled
	next.CPUMillicores, next.MemoryMiB, next.StorageGiB = set.CPUMillicores, set.MemoryMiB, set.StorageGiB
	next.State = store.StatePending
	before, err := s.store.UpdateVDC(ctx, next)
	if err != nil {
		return cur, err
	}
	if !s.cluster.Available() {
		return next, nil
	}
	if err := s.cluster.ApplyVDC(ctx, next); err != nil {
		// PENDING, not what before said: the namespace may hold part of the change until the reconciler has
		// been there.
		before.State = store.StatePending
		if _, cErr := s.store.UpdateVDC(ctx, before); cErr != nil {
			s.log.Error(cErr, "compensating a failed VDC update", "vdc", cur.ID)
		}
		s.cluster.Enqueue(cur.Namespace)
		return cur, &Error{Kind: ErrUnavailable,
			Msg: "Kubernetes did not take the change, so the VDC was left as it was: " + err.Error(), Err: err}
	}
	if err := s.store.SetVDCState(ctx, next.ID, store.StateReady); err != nil {
		return cur, err
	}
	next.State = store.StateReady
	return next, nil
}
