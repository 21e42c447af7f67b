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

// routeParents summarises an HTTPRoute's status.parents. The reason and message are those of the first condition
// that is not True (Accepted before ResolvedRefs), else Accepted's.
func routeParents(route *unstructured.Unstructured) []parent {
	raw, _, _ := unstructured.NestedSlice(route.Object, "status", "parents")
	out := []parent{}
	for _, r := range raw {
		entry, ok := r.(map[string]any)
		if !ok {
			continue
		}
		ref, _, _ := unstructured.NestedMap(entry, "parentRef")
		p := parent{ParentRef: parentRefString(ref, route.GetNamespace()), Accepted: "Unknown", ResolvedRefs: "Unknown"}
		p.ControllerName, _, _ = unstructured.NestedString(entry, "controllerName")
		conditions, _, _ := unstructured.NestedSlice(entry, "conditions")
		var explained bool
		for _, want := range []string{"Accepted", "ResolvedRefs"} {
			for _, c := range conditions {
				cond, _ := c.(map[string]any)
				if cond["type"] != want {
					continue
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
		out = append(out, p)
	}
	return out
}

// parentRefString is namespace/name of the parent (the route's namespace when the ref has none), with /sectionName.
func parentRefString(ref map[string]any, routeNamespace string) string {
	ns, _ := ref["namespace"].(string)
	if ns == "" {
		ns = routeNamespace
	}
	s := ns + "/" + fmt.Sprint(ref["name"])
	if section, _ := ref["sectionName"].(string); section != "" {
		s += "/" + section
	}
	return s
}
