package controller

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

// writeStatus writes the status a reconcile computed (next, from orig) when it is due, and returns the object as it
// was before the write: orig, or the API server's copy when orig was out of date. requeue asks for the reconcile to
// be repeated: the status could not be written for what the object now is.
//
// The write carries orig's resourceVersion: a merge patch against a stale copy would leave out the fields that copy
// already had, so phase and reason could stay as an unseen write left them while the message moved on. Its conflict
// most often means that the reconcile started from a cached copy older than this operator's own previous status write
// (an event that came in while that reconcile ran). Then the status just observed is written onto the API server's
// copy at once: a requeue through the rate limiter would hold an object that is served for a second or more, and a
// fleet being created for several.
func (r *Reconciler) writeStatus(ctx context.Context, orig, next *v1alpha1.AppsIngress) (before *v1alpha1.AppsIngress, requeue bool, err error) {
	now := r.now()
	if !statusDue(orig, next, now) {
		return orig, false, nil
	}
	err = r.patchStatus(ctx, orig, next, now)
	if !apierrors.IsConflict(err) {
		return orig, false, err
	}
	fresh := &v1alpha1.AppsIngress{}
	if err := r.live.Get(ctx, client.ObjectKeyFromObject(next), fresh); err != nil {
		return orig, false, client.IgnoreNotFound(err)
	}
	if fresh.Generation != next.Generation || !fresh.DeletionTimestamp.IsZero() {
		// The spec changed, or the deletion began: this status is for what the object was.
		return orig, true, nil
	}
	rebased := rebase(fresh, next)
	if !statusDue(fresh, rebased, now) {
		return fresh, false, nil
	}
	if err := r.patchStatus(ctx, fresh, rebased, now); err != nil {
		if apierrors.IsConflict(err) {
			return orig, true, nil
		}
		return orig, false, err
	}
	next.ResourceVersion, next.Status = rebased.ResourceVersion, rebased.Status
	return fresh, false, nil
}

func (r *Reconciler) patchStatus(ctx context.Context, base, next *v1alpha1.AppsIngress, now time.Time) error {
	at := metav1.NewTime(now)
	next.Status.LastSyncTime = &at
	return r.client.Status().Patch(ctx, next, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// rebase is fresh with next's status: its fields as next has them, and each of next's conditions set onto fresh's, so
// that a condition's lastTransitionTime is its time in fresh when its status is the same there, and now when not.
func rebase(fresh, next *v1alpha1.AppsIngress) *v1alpha1.AppsIngress {
	out := fresh.DeepCopy()
	conditions := out.Status.Conditions
	out.Status = *next.Status.DeepCopy()
	out.Status.Conditions = conditions
	for _, c := range next.Status.Conditions {
		meta.SetStatusCondition(&out.Status.Conditions, metav1.Condition{
			Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration,
		})
	}
	return out
}
