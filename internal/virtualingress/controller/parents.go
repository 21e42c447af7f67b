package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// parent is one entry of a VirtualHTTPRoute's status.parents: what one Gateway's controller says of the generated
// HTTPRoute (its status.parents entry), in a line a user reads.
type parent struct {
	ParentRef      string `json:"parentRef"`
	ControllerName string `json:"controllerName,omitempty"`
	Accepted       string `json:"accepted"`
	ResolvedRefs   string `json:"resolvedRefs"`
	Reason         string `json:"reason,omitempty"`
	Message        string `json:"message,omitempty"`
}

// routeParents summarises an HTTPRoute's status.parents, one entry per parent of its spec.parentRefs, in that order.
// The reason and message are those of the first condition that is not True (Accepted before ResolvedRefs), else
// Accepted's. A parent whose Gateway controller has not reported on the route's current generation (no entry, or
// conditions observed for an older generation: a Gateway that does not exist, or no controller for its class) is
// Unknown with reason NoGatewayStatus. Entries for parents the route no longer names are left out. The route is
// unstructured, as the shipped binary does not import Gateway API's Go types.
func routeParents(route *unstructured.Unstructured) []parent {
	namespace, generation := route.GetNamespace(), route.GetGeneration()
	reported := map[parentKey]parent{}
	raw, _, _ := unstructured.NestedSlice(route.Object, "status", "parents")
	for _, r := range raw {
		entry, ok := r.(map[string]any)
		if !ok {
			continue
		}
		ref, _, _ := unstructured.NestedMap(entry, "parentRef")
		key := keyOf(ref, namespace)
		if _, seen := reported[key]; !seen {
			reported[key] = reportedParent(entry, namespace, generation)
		}
	}
	refs, _, _ := unstructured.NestedSlice(route.Object, "spec", "parentRefs")
	out := []parent{}
	for _, r := range refs {
		ref, _ := r.(map[string]any)
		p, ok := reported[keyOf(ref, namespace)]
		if !ok {
			p = parent{ParentRef: parentRefString(ref, namespace), Accepted: "Unknown", ResolvedRefs: "Unknown", Reason: ReasonNoGateway,
				Message: "no Gateway controller has reported on this parent (does the Gateway exist, with a controller for its class?)"}
		}
		out = append(out, p)
	}
	return out
}

// reportedParent summarises one status.parents entry of a route at generation.
func reportedParent(entry map[string]any, namespace string, generation int64) parent {
	ref, _, _ := unstructured.NestedMap(entry, "parentRef")
	p := parent{ParentRef: parentRefString(ref, namespace), Accepted: "Unknown", ResolvedRefs: "Unknown"}
	p.ControllerName, _, _ = unstructured.NestedString(entry, "controllerName")
	conditions, _, _ := unstructured.NestedSlice(entry, "conditions")
	var explained bool
	for _, want := range []string{"Accepted", "ResolvedRefs"} {
		for _, c := range conditions {
			cond, _ := c.(map[string]any)
			if cond["type"] != want {
				continue
			}
			if observed, ok, _ := unstructured.NestedInt64(cond, "observedGeneration"); ok && observed < generation {
				return parent{ParentRef: p.ParentRef, ControllerName: p.ControllerName, Accepted: "Unknown", ResolvedRefs: "Unknown",
					Reason: ReasonNoGateway, Message: fmt.Sprintf("%s reported on generation %d of the route, not on its current generation %d",
						controllerOr(p.ControllerName), observed, generation)}
			}
			status := fmt.Sprint(cond["status"])
			if want == "Accepted" {
				p.Accepted = status
			} else {
				p.ResolvedRefs = status
			}
			if !explained && (status != "True" || p.Reason == "") {
				p.Reason, p.Message = fmt.Sprint(cond["reason"]), fmt.Sprint(cond["message"])
				explained = status != "True"
			}
		}
	}
	return p
}

func controllerOr(name string) string {
	if name == "" {
		return "its Gateway controller"
	}
	return name
}

// parentKey is what tells two parentRefs apart in Gateway API: two listeners of one Gateway (sectionName or port), or
// a Gateway and another kind of parent of the same name, are different parents with a status entry each.
type parentKey struct {
	group, kind, namespace, name, section string
	port                                  int64
}

// keyOf is a parentRef's key with Gateway API's defaults filled in: group gateway.networking.k8s.io, kind Gateway and
// the route's namespace.
func keyOf(ref map[string]any, routeNamespace string) parentKey {
	k := parentKey{group: gatewayGroup, kind: "Gateway", namespace: routeNamespace}
	if g, ok := ref["group"].(string); ok {
		k.group = g // "" is the core group, which Gateway API allows
	}
	if s, _ := ref["kind"].(string); s != "" {
		k.kind = s
	}
	if s, _ := ref["namespace"].(string); s != "" {
		k.namespace = s
	}
	k.name, _ = ref["name"].(string)
	k.section, _ = ref["sectionName"].(string)
	switch p := ref["port"].(type) {
	case int64:
		k.port = p
	case float64:
		k.port = int64(p)
	}
	return k
}

// parentRefString is namespace/name of the parent (the route's namespace when the ref has none), with /sectionName
// and :port when the ref names them, and Kind/ in front for a parent that is not a Gateway.
func parentRefString(ref map[string]any, routeNamespace string) string {
	k := keyOf(ref, routeNamespace)
	s := k.namespace + "/" + k.name
	if k.group != gatewayGroup || k.kind != "Gateway" {
		s = k.kind + "/" + s
	}
	if k.section != "" {
		s += "/" + k.section
	}
	if k.port != 0 {
		s += fmt.Sprintf(":%d", k.port)
	}
	return s
}
