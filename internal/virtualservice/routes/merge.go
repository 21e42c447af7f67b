package routes

import "strings"

// Owned reports whether an http route of a live VirtualService is one the operator wrote.
func Owned(route any) bool {
	m, ok := route.(map[string]any)
	if !ok {
		return false
	}
	name, _ := m["name"].(string)
	return strings.HasPrefix(name, RoutePrefix)
}

// Foreign returns the routes of a live spec.http the operator does not own, in their order.
func Foreign(liveHTTP []any) []any {
	var out []any
	for _, r := range liveHTTP {
		if !Owned(r) {
			out = append(out, r)
		}
	}
	return out
}

// HTTP is the full spec.http to write: developer routes first (they are the most specific), then the routes other
// writers added, then the default route(s), which must be last because they match everything.
func (r *Result) HTTP(liveHTTP []any) []any {
	out := make([]any, 0, len(r.DeveloperRoutes)+len(liveHTTP)+len(r.DefaultRoutes))
	for _, d := range r.DeveloperRoutes {
		out = append(out, d)
	}
	out = append(out, Foreign(liveHTTP)...)
	for _, d := range r.DefaultRoutes {
		out = append(out, d)
	}
	return out
}

// Status is a one-line summary for annotations and Events: which developer routes are active and which Services
// were left out and why.
func (r *Result) Status() (active, skipped string) {
	active = strings.Join(r.Active, ",")
	parts := make([]string, len(r.Skipped))
	for i, s := range r.Skipped {
		parts[i] = s.Namespace + ": " + s.Reason
	}
	return active, strings.Join(parts, "; ")
}
