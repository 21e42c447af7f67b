package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// statusPatch is the JSON merge patch of a write. status is a plain field of both kinds (no status subresource: the
// policies recompute it on every write), so the write patches the object itself, and it names only the fields it
// replaces, so that the rest of the status stays the policies'. The resourceVersion makes the API server refuse a write
// based on an outdated read.
type statusPatch struct {
	Metadata statusPatchMetadata `json:"metadata"`
	Status   patchedStatus       `json:"status"`
}

type statusPatchMetadata struct {
	ResourceVersion string `json:"resourceVersion"`
}

type patchedStatus struct {
	// Conditions are all of them, the Ready condition last: a merge patch replaces a list whole.
	Conditions []v1alpha1.Condition `json:"conditions"`
	// Parents is a route's, an empty list included; nil for a VirtualIngress.
	Parents          *[]parent `json:"parents,omitempty"`
	LastServiceEvent string    `json:"lastServiceEvent,omitempty"`
}

// write replaces the Ready condition (and status.parents of a route), and for a repair (a note saying why) also
// status.lastServiceEvent:
// any write of the source makes the resolve policy re-resolve it and the generate policy regenerate what it makes.
// The resolve policy keeps the Ready condition and parents of a write only when it comes from this controller's
// ServiceAccount.
func (r *Reconciler) write(ctx context.Context, obj client.Object, vi *view, v verdict, parents []parent, repairNote string,
	now time.Time,
) error {
	patch := statusPatch{Metadata: statusPatchMetadata{ResourceVersion: vi.meta.GetResourceVersion()}}
	patch.Status.Conditions = withReady(vi.conditions, v, now)
	if parents != nil {
		patch.Status.Parents = &parents
	}
	if repairNote != "" {
		patch.Status.LastServiceEvent = fmt.Sprintf("repair at %s: %s", now.UTC().Format(time.RFC3339), repairNote)
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return r.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
}

// withReady is conditions with the Ready condition v in place of the current one, last. Its transition time is the
// current one's while the status stays the same.
func withReady(conditions []v1alpha1.Condition, v verdict, now time.Time) []v1alpha1.Condition {
	transition := metav1.NewTime(now)
	out := make([]v1alpha1.Condition, 0, len(conditions)+1)
	for _, c := range conditions {
		if c.Type != ConditionReady {
			out = append(out, c)
		} else if c.Status == v.status && c.LastTransitionTime != nil {
			transition = *c.LastTransitionTime
		}
	}
	return append(out, v1alpha1.Condition{Type: ConditionReady, Status: v.status, Reason: v.reason, Message: v.message,
		LastTransitionTime: &transition})
}
