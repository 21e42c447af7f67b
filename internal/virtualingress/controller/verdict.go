package controller

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Reasons of the Ready condition of a VirtualIngress. A VirtualHTTPRoute's name the HTTPRoute instead
// (HTTPRouteUpToDate, ...; sourceKind.reason). Unresolved and Stale are copied from the Resolved condition.
const (
	ReasonUpToDate            = "IngressUpToDate"
	ReasonMissing             = "IngressMissing"
	ReasonOutOfDate           = "IngressOutOfDate"
	ReasonNameTaken           = "IngressNameTaken"
	ReasonGenerationFailed    = "GenerationFailed"
	ReasonResolutionOutOfDate = "ResolutionOutOfDate"
	ReasonUnresolved          = "Unresolved"
	// A VirtualHTTPRoute's HTTPRoute that no Gateway has reported on, or that a Gateway refused.
	ReasonNoGateway       = "NoGatewayStatus"
	ReasonNotAccepted     = "NotAccepted"
	ReasonRefsNotResolved = "RefsNotResolved"
)

// generatedState is what the verdict needs of the generated object.
type generatedState struct {
	// controller is the UID and kind of its controller ownerReference ("" when none).
	controllerUID  types.UID
	controllerKind string
	// holds: its spec holds status.<field>.spec.
	holds bool
	// metadataLag describes a label or annotation of the source it does not agree with ("" when none).
	metadataLag string
	// parents summarises status.parents (routes).
	parents []parent
}

// inputs is everything the Ready verdict depends on.
type inputs struct {
	kind *sourceKind
	vi   *view
	// uid of the source: the generated object is its own only when its controller ownerReference carries it.
	uid types.UID
	// generated is the object named by status.<field>.name; nil when there is none.
	generated *generatedState
	// failure is the message of Kyverno's last failed attempt to generate it ("" when none).
	failure string
	// lag describes a backend whose status no longer matches the Services ("" when none); lagFound says the Services
	// now give it a Service its status lacks, and lagUnfollowed that Kyverno will never follow that Service's event.
	lag                     string
	lagFound, lagUnfollowed bool
}

// verdict is the Ready condition plus what the reconciler does about it.
type verdict struct {
	status  metav1.ConditionStatus
	reason  string
	message string
	// transient: the normal path (Kyverno generating, the service-events policy re-resolving) usually clears it
	// within a second; the reconciler waits a grace period before reporting it.
	transient bool
	// repairable: a write of the source (which re-runs resolution and generation) can clear it.
	repairable bool
	// urgent: a repair is due after Options.LagRepairAfter rather than RepairAfter. Only a Service that appeared
	// and is not followed yet is urgent (the source waits for it, possibly without an Ingress at all). A Service that
	// went away leaves the Ingress as it was, and whole namespaces of them go at once when a namespace is deleted:
	// repairing each of its sources within a second would only queue writes in front of real work.
	urgent bool
	// now: a repair is due at once. The Service that appeared had no name when it was admitted (generateName), and
	// Kyverno's background controller fetches a CREATE's trigger by the name or UID admission saw
	// (pkg/background/common/resource.go, GetTrigger): its event is dropped, so waiting for Kyverno gains nothing.
	now bool
	// first: the source waits for its first generated object, which Kyverno resolved but has not generated. Its
	// repair comes with its report, after Options.Grace, rather than after RepairAfter: the write is made then anyway,
	// and the grace covers the time before Kyverno's generate request is seen (more than a second, now and then, under
	// the clusterPolicy engine in the end-to-end suite). An object that went away after it was reported on waits for
	// RepairAfter, as a namespace being deleted takes them all.
	first bool
}

// decide computes the Ready condition: True only when the generated object exists, is controlled by the source,
// holds status.<field>.spec and the labels and annotations the policies copy, every backend resolved, and, for an
// HTTPRoute, every parent Gateway accepted it and resolved its references.
func decide(in inputs) verdict {
	k := in.kind
	noun := k.generated.Kind
	resolved := in.vi.condition(ConditionResolved)
	if in.lag != "" {
		return verdict{status: metav1.ConditionFalse, reason: ReasonResolutionOutOfDate, transient: true, repairable: true,
			urgent: in.lagFound, now: in.lagUnfollowed, message: "status is behind the Services, re-resolving: " + in.lag}
	}
	if in.vi.generatedName == "" || in.vi.want == nil {
		v := verdict{status: metav1.ConditionFalse, reason: ReasonUnresolved, message: "no " + noun + " yet"}
		if resolved != nil {
			v.reason, v.message = resolved.Reason, resolved.Message
		}
		return v
	}
	name := noun + " " + in.vi.generatedName
	g := in.generated
	if g == nil {
		if in.failure != "" {
			return verdict{status: metav1.ConditionFalse, reason: ReasonGenerationFailed, repairable: true,
				message: fmt.Sprintf("%s could not be created: %s", name, in.failure)}
		}
		return verdict{status: metav1.ConditionFalse, reason: k.reason("Missing"), transient: true, repairable: true,
			first: awaitingFirst(in.vi), message: name + " does not exist"}
	}
	if g.controllerKind != k.gvk.Kind || g.controllerUID != in.uid {
		return verdict{status: metav1.ConditionFalse, reason: k.reason("NameTaken"),
			message: fmt.Sprintf("%s exists and was not generated from this %s; it is left alone. Rename the %s or "+
				"remove that %s", name, k.gvk.Kind, k.gvk.Kind, noun)}
	}
	behind := ""
	switch {
	case !g.holds:
		behind = fmt.Sprintf("differs from status.%s.spec", k.statusField)
	case g.metadataLag != "":
		behind = "is behind the " + k.gvk.Kind + ": " + g.metadataLag
	}
	if behind != "" {
		if in.failure != "" {
			return verdict{status: metav1.ConditionFalse, reason: ReasonGenerationFailed, repairable: true,
				message: fmt.Sprintf("%s could not be updated: %s", name, in.failure)}
		}
		return verdict{status: metav1.ConditionFalse, reason: k.reason("OutOfDate"), transient: true, repairable: true,
			message: name + " " + behind}
	}
	if resolved != nil && resolved.Status != metav1.ConditionTrue {
		return verdict{status: metav1.ConditionFalse, reason: resolved.Reason, message: resolved.Message}
	}
	if k.gateways != nil {
		if v, ok := gatewayVerdict(name, g.parents); !ok {
			return v
		}
		return verdict{status: metav1.ConditionTrue, reason: k.reason("UpToDate"),
			message: fmt.Sprintf("%s holds status.%s.spec; accepted by %s",
				name, k.statusField, parentRefs(g.parents))}
	}
	return verdict{status: metav1.ConditionTrue, reason: k.reason("UpToDate"),
		message: fmt.Sprintf("%s holds status.%s.spec", name, k.statusField)}
}

// awaitingFirst tells whether the source was never reported on with its generated object: no Ready condition yet, or
// the Unresolved one of a source that had no Service. Its object missing, with nothing pending in Kyverno, is then a
// generation Kyverno lost, not an object that went away.
func awaitingFirst(vi *view) bool {
	ready := vi.condition(ConditionReady)
	return ready == nil || ready.Reason == ReasonUnresolved
}

// gatewayVerdict judges a route by every parent it names: not ok when a Gateway refused it, while a parent's
// Gateway controller has not reported on its current generation (usually within a second; there may be no such Gateway
// or controller), or when one could not resolve its references.
func gatewayVerdict(name string, parents []parent) (verdict, bool) {
	if len(parents) == 0 {
		return verdict{status: metav1.ConditionFalse, reason: ReasonNoGateway, transient: true,
			message: name + " names no parent Gateway"}, false
	}
	for _, p := range parents {
		if p.Accepted != "True" && p.Reason != ReasonNoGateway {
			return verdict{status: metav1.ConditionFalse, reason: ReasonNotAccepted,
				message: fmt.Sprintf("Gateway %s did not accept %s: %s: %s", p.ParentRef, name, p.Reason, p.Message)}, false
		}
	}
	for _, p := range parents {
		if p.Accepted != "True" {
			return verdict{status: metav1.ConditionFalse, reason: ReasonNoGateway, transient: true,
				message: fmt.Sprintf("%s has no status from the Gateway controller of parent %s yet: %s", name, p.ParentRef, p.Message)}, false
		}
	}
	for _, p := range parents {
		if p.ResolvedRefs != "True" {
			return verdict{status: metav1.ConditionFalse, reason: ReasonRefsNotResolved,
				message: fmt.Sprintf("Gateway %s could not resolve the backendRefs of %s: %s: %s", p.ParentRef, name, p.Reason, p.Message)}, false
		}
	}
	return verdict{}, true
}

func parentRefs(parents []parent) string {
	refs := make([]string, len(parents))
	for i, p := range parents {
		refs[i] = p.ParentRef
	}
	return strings.Join(refs, ", ")
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
