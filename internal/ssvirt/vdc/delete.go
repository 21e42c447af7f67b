package vdc

import (
	"context"
	"errors"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Deletion is how a Delete went. Done: the namespace was already gone, so the row is deleted and Task has
// ended in success. Otherwise Task runs until the reconciler has seen the namespace go and deleted the row.
type Deletion struct {
	Task store.Task
	Done bool
}

// Delete hides VDC v at once (the row stays, DELETING, as the reconciler's record of what to delete), starts the
// task the caller can follow, and deletes the namespace; the row goes once the namespace has. While Kubernetes
// deletes the namespace, and while it is unreachable, the reconciler finishes the deletion and the task with it.
// A VDC that still has vApps is refused with ErrHasVApps.
func (s *Service) Delete(ctx context.Context, v store.VDC) (Deletion, error) {
	if err := s.store.MarkVDCDeleting(ctx, store.Scope{}, v.ID); errors.Is(err, store.ErrConflict) {
		return Deletion{}, &Error{Kind: ErrHasVApps, Msg: "the VDC still has vApps: delete them first", Err: err}
	} else if err != nil {
		return Deletion{}, err
	}
	// The task exists before the reconciler can finish the deletion, so there is always a task for it to finish.
	task, err := s.tasks.StartTask(ctx, v.OrgID, store.OpDeleteVDC, naming.KindVDC, v.ID, v.Name)
	if err != nil {
		return Deletion{}, err
	}
	if s.cluster.Available() {
		gone, err := s.cluster.DeleteNamespace(ctx, v.Namespace, v.ID)
		if err == nil && gone {
			if err := s.store.DeleteVDCRow(ctx, v.ID); err != nil {
				return Deletion{}, err
			}
			if err := s.store.FinishTask(ctx, task.ID, store.TaskSuccess, "the namespace is gone"); err != nil {
				return Deletion{}, err
			}
			task.Status = store.TaskSuccess
			return Deletion{Task: task, Done: true}, nil
		}
		// A failed delete is the reconciler's to retry, as one Kubernetes has not finished is its to wait for.
	}
	s.cluster.Enqueue(v.Namespace)
	return Deletion{Task: task}, nil
}
