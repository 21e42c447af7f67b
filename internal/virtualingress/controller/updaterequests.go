package controller

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// updateRequestGVK is Kyverno's record of a pending generation: its status tells why a generation failed (an
// admission policy that refused the Ingress, for one), which Kyverno reports nowhere else. UpdateRequests are read
// unstructured: the shipped binary must not import Kyverno (make deps-check).
var updateRequestGVK = schema.GroupVersionKind{Group: "kyverno.io", Version: "v2", Kind: "UpdateRequest"}

// triggerIndex indexes UpdateRequests by the kind/namespace/name of the VirtualIngress or VirtualHTTPRoute whose
// generation they carry (triggerKey).
const triggerIndex = "virtual-ingress.io/trigger"

func triggerKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// GeneratesFor tells whether the UpdateRequest u is a generate request (either engine's) for the object of that kind
// (VirtualIngress or VirtualHTTPRoute), namespace and name, read as the controller reads Kyverno's requests.
func GeneratesFor(u *unstructured.Unstructured, kind, namespace, name string) bool {
	return slices.Contains(updateRequestTrigger(u), triggerKey(kind, namespace, name))
}

func newUpdateRequest() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(updateRequestGVK)
	return u
}

func newUpdateRequestList() *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(updateRequestGVK.GroupVersion().WithKind(updateRequestGVK.Kind + "List"))
	return list
}

// updateRequestTrigger is the index function: generate requests (both engines) whose trigger is a VirtualIngress or a
// VirtualHTTPRoute.
// Kyverno names the trigger in spec.resource, or per rule in spec.ruleContext[].trigger (the CEL engine's requests).
func updateRequestTrigger(obj client.Object) []string {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	requestType, _, _ := unstructured.NestedString(u.Object, "spec", "requestType")
	if requestType != "generate" && requestType != "cel-generate" {
		return nil
	}
	triggers := []any{}
	if resource, ok, _ := unstructured.NestedMap(u.Object, "spec", "resource"); ok {
		triggers = append(triggers, resource)
	}
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "ruleContext")
	for _, r := range rules {
		if m, ok := r.(map[string]any); ok && m["trigger"] != nil {
			triggers = append(triggers, m["trigger"])
		}
	}
	seen := map[string]bool{}
	var keys []string
	for _, t := range triggers {
		m, _ := t.(map[string]any)
		if m["kind"] != GVK.Kind && m["kind"] != RouteGVK.Kind {
			continue
		}
		key := triggerKey(fmt.Sprint(m["kind"]), fmt.Sprint(m["namespace"]), fmt.Sprint(m["name"]))
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	}
	return keys
}

// statelessOrphanAfter is how old an UpdateRequest with no state may be and still count as Kyverno's work. Kyverno's
// admission controller creates a request, then sets its state to Pending in a second write; its background
// controller processes only Pending ones. An admission Pod that stops between the two writes (a rollout, an upgrade
// of Kyverno's chart), or a second write that fails (Kyverno then creates another request), leaves a request no one
// will ever process, and a source waiting for it would never be repaired.
const statelessOrphanAfter = 30 * time.Second

// generation is what Kyverno's UpdateRequests say of one source object.
type generation struct {
	// pending: Kyverno still has a request to process.
	pending bool
	// failure is the message of a failed request.
	failure string
	// orphanIn is how long until the youngest request still without a state counts as an orphan (0: none waits).
	// No event marks that moment (the request does not change), so the source is looked at again then.
	orphanIn time.Duration
}

// generationState summarises the UpdateRequests of one source object. Completed and skipped requests are done with,
// and a request left without a state for longer than statelessOrphanAfter is an orphan: neither is pending.
func generationState(requests []unstructured.Unstructured, now time.Time) generation {
	var g generation
	for _, ur := range requests {
		state, _, _ := unstructured.NestedString(ur.Object, "status", "state")
		switch state {
		case "Completed", "Skip":
			continue
		case "":
			left := statelessOrphanAfter - now.Sub(ur.GetCreationTimestamp().Time)
			if left <= 0 {
				continue
			}
			g.orphanIn = max(g.orphanIn, left)
		}
		g.pending = true
		message, _, _ := unstructured.NestedString(ur.Object, "status", "message")
		retries, _, _ := unstructured.NestedInt64(ur.Object, "status", "retryCount")
		// Kyverno turns a Failed request back to Pending to retry it; a retried one keeps its last message.
		if message != "" && (state == "Failed" || retries > 0) {
			g.failure = message
		}
	}
	return g
}
