package vdc

import (
	"context"
	"errors"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// namespaceAttempts bounds the namespace names a create tries when each one belongs to something else.
const namespaceAttempts = 3

// Create writes the row first, then the namespace. The row comes first so that a process that stops in between
// leaves something the reconciler finishes, never a namespace no row explains. With Kubernetes known to be
// unreachable the row is kept as PENDING and the reconciler makes the namespace when Kubernetes is back; when
// Kubernetes fails during the create, the row is rolled back (its tombstone lets the reconciler remove whatever
// part was made) and the error is ErrUnavailable.
func (s *Service) Create(ctx context.Context, org store.Org, spec Spec) (store.VDC, error) {
	row := store.VDC{
		OrgID: org.ID, Name: spec.Name, Description: spec.Description, Enabled: spec.Enabled,
		CPUMillicores: spec.CPUMillicores, MemoryMiB: spec.MemoryMiB, StorageGiB: spec.StorageGiB,
		State: store.StatePending,
	}
	names := func(id string, attempt int) string { return naming.Namespace(org.Name, spec.Name, id, attempt) }
	// A namespace of the chosen name that is not ssvirt's is never adopted: the rollback's tombstone holds that name,
	// so the next attempt gets a suffixed one.
	for attempt := 1; ; attempt++ {
		v, err := s.store.CreateVDC(ctx, row, names)
		if errors.Is(err, store.ErrConflict) {
			return store.VDC{}, &Error{Kind: ErrNameTaken, Msg: "the organization has a VDC named " + spec.Name, Err: err}
		}
		if err != nil {
			return store.VDC{}, err
		}
		if !s.cluster.Available() {
			return v, nil
		}
		err = s.cluster.ApplyVDC(ctx, v)
		if err == nil {
			if err := s.store.SetVDCState(ctx, v.ID, store.StateReady); err != nil {
				return store.VDC{}, err
			}
			v.State = store.StateReady
			return v, nil
		}
		if rbErr := s.store.RollbackVDC(ctx, v.ID); rbErr != nil {
			// The row stays, PENDING: the reconciler keeps trying to make its namespace.
			s.log.Error(rbErr, "rolling back a VDC whose namespace failed; the reconciler keeps trying to make it", "vdc", v.ID)
			return store.VDC{}, &Error{Kind: ErrUnavailable, Msg: "Kubernetes did not take the VDC's namespace: " + err.Error(), Err: err}
		}
		if !errors.Is(err, kube.ErrNamespaceTaken) {
			s.cluster.Enqueue(v.Namespace) // whatever part was made goes
			return store.VDC{}, &Error{Kind: ErrUnavailable,
				Msg: "Kubernetes did not take the VDC's namespace, so the VDC was not created: " + err.Error(), Err: err}
		}
		// Nothing was made in a namespace that is someone else's: there is nothing for the reconciler to remove.
		if attempt == namespaceAttempts {
			return store.VDC{}, &Error{Kind: ErrNamespaceTaken, Msg: err.Error(), Err: err}
		}
	}
}
