package controller

import (
	"fmt"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Reasons of the Ready condition. Unresolved and Stale are copied from the Resolved condition.
const (
	ReasonUpToDate            = "IngressUpToDate"
	ReasonMissing             = "IngressMissing"
	ReasonOutOfDate           = "IngressOutOfDate"
	ReasonNameTaken           = "IngressNameTaken"
	ReasonGenerationFailed    = "GenerationFailed"
	ReasonResolutionOutOfDate = "ResolutionOutOfDate"
	ReasonUnresolved          = "Unresolved"
)

// inputs is everything the Ready verdict depends on.
type inputs struct {
	vi *view
	// uid of the VirtualIngress: the Ingress is ours only when its controller ownerReference carries it.
	uid types.UID
	// ingress is the Ingress named by status.ingress.name; nil when there is none.
	ingress *networkingv1.Ingress
	// failure is the message of Kyverno's last failed attempt to generate the Ingress ("" when none).
	failure string
	// lag describes a backend whose status no longer matches the Services ("" when none).
	lag string
}

// verdict is the Ready condition plus what the reconciler does about it.
type verdict struct {
	status  metav1.ConditionStatus
	reason  string
	message string
	// transient: the normal path (Kyverno generating, the service-events policy re-resolving) usually clears it
	// within a second; the reconciler waits a grace period before reporting it.
	transient bool
	// repairable: a write of the VirtualIngress (which re-runs resolution and generation) can clear it.
	repairable bool
}

// decide computes the Ready condition: True only when the Ingress exists, is controlled by this VirtualIngress, holds
// status.ingress.spec and every backend resolved.
func decide(in inputs) verdict {
	resolved := in.vi.condition(ConditionResolved)
	if in.lag != "" {
		return verdict{status: metav1.ConditionFalse, reason: ReasonResolutionOutOfDate, transient: true, repairable: true,
			message: "status is behind the Services, re-resolving: " + in.lag}
	}
	if in.vi.ingressName == "" || in.vi.ingressSpec == nil {
		v := verdict{status: metav1.ConditionFalse, reason: ReasonUnresolved, message: "no Ingress yet"}
		if resolved != nil {
			v.reason, v.message = resolved.Reason, resolved.Message
		}
		return v
	}
	name := in.vi.ingressName
	if in.ingress == nil {
		if in.failure != "" {
			return verdict{status: metav1.ConditionFalse, reason: ReasonGenerationFailed, repairable: true,
				message: fmt.Sprintf("Ingress %s could not be created: %s", name, in.failure)}
		}
		return verdict{status: metav1.ConditionFalse, reason: ReasonMissing, transient: true, repairable: true,
			message: fmt.Sprintf("Ingress %s does not exist", name)}
	}
	if !controlledBy(in.ingress, in.uid) {
		return verdict{status: metav1.ConditionFalse, reason: ReasonNameTaken,
			message: fmt.Sprintf("Ingress %s exists and was not generated from this VirtualIngress; it is left alone. "+
				"Rename the VirtualIngress or remove that Ingress", name)}
	}
	if !equality.Semantic.DeepEqual(&in.ingress.Spec, in.vi.ingressSpec) {
		if in.failure != "" {
			return verdict{status: metav1.ConditionFalse, reason: ReasonGenerationFailed, repairable: true,
				message: fmt.Sprintf("Ingress %s could not be updated: %s", name, in.failure)}
		}
		return verdict{status: metav1.ConditionFalse, reason: ReasonOutOfDate, transient: true, repairable: true,
			message: fmt.Sprintf("Ingress %s differs from status.ingress.spec", name)}
	}
	if resolved != nil && resolved.Status != metav1.ConditionTrue {
		return verdict{status: metav1.ConditionFalse, reason: resolved.Reason, message: resolved.Message}
	}
	return verdict{status: metav1.ConditionTrue, reason: ReasonUpToDate,
		message: fmt.Sprintf("Ingress %s holds status.ingress.spec; every matchLabels backend resolved", name)}
}

func controlledBy(ing *networkingv1.Ingress, uid types.UID) bool {
	owner := metav1.GetControllerOf(ing)
	return owner != nil && owner.Kind == GVK.Kind && owner.UID == uid
}

// sanitize keeps a message that quotes others' text (an admission denial) from reaching Kyverno as a variable: the
// clusterPolicy engine's resolve rules carry the Ready condition through a JMESPath variable, which substitutes "{{".
func sanitize(message string) string {
	const limit = 1024
	message = strings.ReplaceAll(message, "{{", "{ {")
	if len(message) > limit {
		message = message[:limit] + "…"
	}
	return message
}
