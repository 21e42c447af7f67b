package controller

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// routeSpec is a status.route.spec as the resolve policy writes it: one backendRef, no defaults.
func routeSpec(service string) map[string]any {
	return map[string]any{
		"parentRefs": []any{map[string]any{"name": "gw"}},
		"rules": []any{map[string]any{
			"backendRefs": []any{map[string]any{"name": service, "port": int64(8443)}},
		}},
	}
}

// storedRoute is the HTTPRoute as the API server stores what Kyverno wrote from routeSpec(service): with HTTPRoute's
// defaults filled in, owned by owner, with the given status.parents.
func storedRoute(owner, service string, parents ...any) *unstructured.Unstructured {
	yes := true
	r := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "shop-generated", "namespace": "tenant"},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}},
			"rules": []any{map[string]any{
				"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}},
				"backendRefs": []any{map[string]any{"group": "", "kind": "Service", "name": service, "port": int64(8443), "weight": int64(1)}},
			}},
		},
		"status": map[string]any{"parents": parents},
	}}
	if owner != "" {
		r.SetOwnerReferences([]metav1.OwnerReference{{Kind: "VirtualHTTPRoute", Name: "shop", UID: "vhr-uid", Controller: &yes}})
	}
	return r
}

// withParentRefs replaces the route's spec.parentRefs (each a Gateway in the route's namespace, by name) and sets its
// generation.
func withParentRefs(r *unstructured.Unstructured, generation int64, names ...string) *unstructured.Unstructured {
	refs := make([]any, len(names))
	for i, n := range names {
		refs[i] = map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": n}
	}
	_ = unstructured.SetNestedSlice(r.Object, refs, "spec", "parentRefs")
	r.SetGeneration(generation)
	return r
}

// observedAt sets the observedGeneration of every condition of a status.parents entry.
func observedAt(entry map[string]any, generation int64) map[string]any {
	for _, c := range entry["conditions"].([]any) {
		c.(map[string]any)["observedGeneration"] = generation
	}
	return entry
}

func gatewayParent(name, accepted, resolvedRefs, reason string) map[string]any {
	return map[string]any{
		"parentRef":      map[string]any{"name": name},
		"controllerName": "example.com/gateway",
		"conditions": []any{
			map[string]any{"type": "Accepted", "status": accepted, "reason": reason, "message": "accepted says " + accepted},
			map[string]any{"type": "ResolvedRefs", "status": resolvedRefs, "reason": "RefsReason", "message": "refs say " + resolvedRefs},
		},
	}
}

func TestRouteHoldsIgnoresTheAPIServersDefaults(t *testing.T) {
	cases := []struct {
		name  string
		route *unstructured.Unstructured
		want  bool
	}{
		{"as stored, defaults added", storedRoute("x", "svc-a"), true},
		{"another Service", storedRoute("x", "svc-b"), false},
	}
	extra := storedRoute("x", "svc-a")
	rules, _, _ := unstructured.NestedSlice(extra.Object, "spec", "rules")
	refs := rules[0].(map[string]any)["backendRefs"].([]any)
	rules[0].(map[string]any)["backendRefs"] = append(refs, map[string]any{"name": "added-by-hand", "port": int64(80)})
	_ = unstructured.SetNestedSlice(extra.Object, rules, "spec", "rules")
	cases = append(cases, struct {
		name  string
		route *unstructured.Unstructured
		want  bool
	}{"a backendRef added by hand", extra, false})
	for _, c := range cases {
		got, err := wantedRoute(routeSpec("svc-a")).heldBy(c.route)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: holds = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRouteParentsSummarisesEachGateway(t *testing.T) {
	r := storedRoute("x", "svc-a",
		gatewayParent("gw", "True", "True", "Accepted"),
		map[string]any{
			"parentRef":  map[string]any{"name": "other", "namespace": "gateways", "sectionName": "https"},
			"conditions": []any{map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted"}, map[string]any{"type": "ResolvedRefs", "status": "False", "reason": "BackendNotFound", "message": "no svc-a"}},
		},
		gatewayParent("no-longer-named", "True", "True", "Accepted"))
	_ = unstructured.SetNestedSlice(r.Object, []any{
		map[string]any{"name": "gw"},
		map[string]any{"name": "other", "namespace": "gateways", "sectionName": "https"},
		map[string]any{"name": "ghost"},
	}, "spec", "parentRefs")
	got := routeParents(r)
	if len(got) != 3 {
		t.Fatalf("got %+v, want one entry per spec.parentRefs", got)
	}
	if got[2].ParentRef != "tenant/ghost" || got[2].Accepted != "Unknown" || got[2].Reason != ReasonNoGateway {
		t.Errorf("a parent without a status entry: %+v", got[2])
	}
	if got[0].ParentRef != "tenant/gw" || got[0].Accepted != "True" || got[0].ResolvedRefs != "True" || got[0].ControllerName != "example.com/gateway" {
		t.Errorf("first parent %+v", got[0])
	}
	if got[1].ParentRef != "gateways/other/https" || got[1].ResolvedRefs != "False" || got[1].Reason != "BackendNotFound" || got[1].Message != "no svc-a" {
		t.Errorf("second parent %+v: want its failing condition's reason and message", got[1])
	}
}

func TestDecideRoute(t *testing.T) {
	view := func() *view {
		return &view{generatedName: "shop-generated", want: wantedRoute(routeSpec("svc-a")),
			conditions: []v1alpha1.Condition{{Type: ConditionResolved, Status: "True", Reason: "Resolved"}}}
	}
	// The route holds what status.route.spec says, with the parents the route names.
	state := func(r *unstructured.Unstructured) *generatedState {
		spec := routeSpec("svc-a")
		refs, _, _ := unstructured.NestedSlice(r.Object, "spec", "parentRefs")
		names := []any{}
		for _, ref := range refs {
			names = append(names, map[string]any{"name": ref.(map[string]any)["name"]})
		}
		spec["parentRefs"] = names
		g, err := virtualHTTPRouteKind.state(r, wantedRoute(spec))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	const uid = "vhr-uid"
	cases := []struct {
		name      string
		generated *generatedState
		reason    string
		status    metav1.ConditionStatus
		message   string
	}{
		{"missing", nil, "HTTPRouteMissing", "False", "HTTPRoute shop-generated does not exist"},
		{"someone else's", state(storedRoute("", "svc-a")), "HTTPRouteNameTaken", "False", "was not generated from this VirtualHTTPRoute"},
		{"outdated", state(storedRoute("x", "svc-b")), "HTTPRouteOutOfDate", "False", "differs from status.route.spec"},
		{"no Gateway has reported", state(storedRoute("x", "svc-a")), ReasonNoGateway, "False", "no status from the Gateway controller of parent tenant/gw"},
		{"one of two parents has not reported", state(withParentRefs(storedRoute("x", "svc-a", gatewayParent("gw", "True", "True", "Accepted")), 1, "gw", "ghost-gw")),
			ReasonNoGateway, "False", "parent tenant/ghost-gw"},
		{"a parent's status is for an older generation", state(withParentRefs(storedRoute("x", "svc-a",
			observedAt(gatewayParent("gw", "True", "True", "Accepted"), 2), observedAt(gatewayParent("gw2", "True", "True", "Accepted"), 1)), 2, "gw", "gw2")),
			ReasonNoGateway, "False", "reported on generation 1 of the route, not on its current generation 2"},
		{"both parents accepted the current generation", state(withParentRefs(storedRoute("x", "svc-a",
			observedAt(gatewayParent("gw", "True", "True", "Accepted"), 2), observedAt(gatewayParent("gw2", "True", "True", "Accepted"), 2)), 2, "gw", "gw2")),
			"HTTPRouteUpToDate", "True", "accepted by tenant/gw, tenant/gw2"},
		{"refused by a Gateway", state(storedRoute("x", "svc-a", gatewayParent("gw", "False", "True", "NotAllowedByListeners"))),
			ReasonNotAccepted, "False", "Gateway tenant/gw did not accept HTTPRoute shop-generated: NotAllowedByListeners"},
		{"references not resolved", state(storedRoute("x", "svc-a", gatewayParent("gw", "True", "False", "Accepted"))),
			ReasonRefsNotResolved, "False", "could not resolve the backendRefs"},
		{"accepted", state(storedRoute("x", "svc-a", gatewayParent("gw", "True", "True", "Accepted"))),
			"HTTPRouteUpToDate", "True", "accepted by tenant/gw"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := decide(inputs{kind: virtualHTTPRouteKind, vi: view(), uid: uid, generated: c.generated})
			if v.status != c.status || v.reason != c.reason || !strings.Contains(v.message, c.message) {
				t.Fatalf("got %s/%s %q, want %s/%s containing %q", v.status, v.reason, v.message, c.status, c.reason, c.message)
			}
		})
	}
}

// routeBackend is a backendRef's status entry, resolved (or not) to service and port, asking for the port portName.
func routeBackend(state v1alpha1.BackendState, service, portName string, port int32) backend {
	return backend{BackendStatus: v1alpha1.BackendStatus{State: state, Service: service}, Port: port, selector: selector{PortName: portName}}
}

func TestResolutionLagOfNamedPorts(t *testing.T) {
	sel := map[string]string{"app": "shop"}
	withPorts := func(name string, ports ...corev1.ServicePort) corev1.Service {
		s := service(name, time.Minute, sel)
		s.Spec.Ports = ports
		return s
	}
	http := corev1.ServicePort{Name: "http", Port: 8443}
	cases := []struct {
		name     string
		backend  backend
		services []corev1.Service
		lagging  bool
	}{
		{"resolved to the port's number", routeBackend("Resolved", "a", "http", 8443), []corev1.Service{withPorts("a", http)}, false},
		{"the port's number changed", routeBackend("Resolved", "a", "http", 80), []corev1.Service{withPorts("a", http)}, true},
		{"no such port", routeBackend("NoPort", "", "grpc", 0), []corev1.Service{withPorts("a", http)}, false},
		{"the port appeared", routeBackend("NoPort", "", "http", 0), []corev1.Service{withPorts("a", http)}, true},
		{"the port went: the route keeps the last", routeBackend("Stale", "a", "grpc", 9000), []corev1.Service{withPorts("a", http)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.backend.Field = "spec.rules[0].backendRefs[0]"
			c.backend.MatchLabels = sel
			if lag, _ := resolutionLag([]backend{c.backend}, c.services, "error"); (lag != "") != c.lagging {
				t.Fatalf("lag %q, want lagging=%v", lag, c.lagging)
			}
		})
	}
}

// Two listeners of one Gateway, told apart by sectionName or by port, and a parent of another kind with the Gateway's
// name are four parents: each gets its own status entry, not the first one reported under the name.
func TestRouteParentsKeyEachParentByGroupKindNamespaceNameSectionAndPort(t *testing.T) {
	entry := func(ref map[string]any, accepted, reason string) map[string]any {
		return map[string]any{"parentRef": ref, "controllerName": "example.com/gateway", "conditions": []any{
			map[string]any{"type": "Accepted", "status": accepted, "reason": reason},
			map[string]any{"type": "ResolvedRefs", "status": "True", "reason": "ResolvedRefs"},
		}}
	}
	refs := []map[string]any{
		{"name": "gw", "sectionName": "http"},
		{"name": "gw", "sectionName": "https"},
		{"name": "gw", "port": int64(8443)},
		{"name": "gw", "group": "example.com", "kind": "Mesh"},
	}
	r := storedRoute("x", "svc-a",
		entry(map[string]any{"name": "gw", "sectionName": "http", "group": gatewayGroup, "kind": "Gateway"}, "True", "Accepted"),
		entry(map[string]any{"name": "gw", "namespace": "tenant", "sectionName": "https"}, "False", "NotAllowedByListeners"),
		entry(map[string]any{"name": "gw", "port": int64(8443)}, "False", "NoMatchingParent"),
		entry(map[string]any{"name": "gw", "group": "example.com", "kind": "Mesh"}, "True", "Accepted"))
	specRefs := make([]any, len(refs))
	for i, ref := range refs {
		specRefs[i] = ref
	}
	_ = unstructured.SetNestedSlice(r.Object, specRefs, "spec", "parentRefs")
	got := routeParents(r)
	want := []struct{ ref, accepted, reason string }{
		{"tenant/gw/http", "True", "Accepted"},
		{"tenant/gw/https", "False", "NotAllowedByListeners"},
		{"tenant/gw:8443", "False", "NoMatchingParent"},
		{"Mesh/tenant/gw", "True", "Accepted"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %d parents", got, len(want))
	}
	for i, w := range want {
		if got[i].ParentRef != w.ref || got[i].Accepted != w.accepted || got[i].Reason != w.reason {
			t.Errorf("parent %d: got %+v, want %s Accepted=%s reason %s", i, got[i], w.ref, w.accepted, w.reason)
		}
	}
}
