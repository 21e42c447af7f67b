//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

// The VirtualHTTPRoute scenarios, on Gateway API's standard-channel CRDs (installed by TestMain from the pinned
// module): the generated HTTPRoutes pass HTTPRoute's own validation on a real API server.

// routeScenarios run after the VirtualIngress scenarios under the engines that render the route policies.
var routeScenarios = []struct {
	name string
	run  func(*testing.T)
}{
	{"VirtualHTTPRoute: a named port resolved to the Service's number", testRouteResolved},
	{"VirtualHTTPRoute: Service recreated, then gone", testRouteServiceRecreated},
	{"VirtualHTTPRoute: Ready follows what the Gateway says of the HTTPRoute", testRouteGatewayVerdict},
	{"VirtualHTTPRoute write needs HTTPRoute write", testRouteWriteRights},
	{"VirtualHTTPRoute: an HTTPRoute name held by another route is refused", testRouteNameTaken},
	{"VirtualHTTPRoute: an HTTPRoute appearing while unresolved is never taken over", testNoTakeoverWhileUnresolved(routeTakeover)},
	{"VirtualHTTPRoute: an HTTPRoute appearing before generation is never taken over", testNoTakeoverBeforeGeneration(routeTakeover)},
	{"VirtualHTTPRoute: an HTTPRoute pre-created under its name and claiming it is refused", testNoPreCreatedClaim(routeTakeover)},
	{"VirtualHTTPRoute: an HTTPRoute is never taken over through its status subresource", testNoTakeoverThroughStatus(routeTakeover)},
	{"VirtualHTTPRoute: bad input rejected by the API server", testRouteBadInput},
}

// routesEngines are the engines whose chart renders the VirtualHTTPRoute policies.
var routesEngines = map[string]bool{policyengine.ClusterPolicy: true, policyengine.GeneratingPolicy: true}

func getRoute(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	r, err := env.dyn.Resource(virtualingress.RouteGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting VirtualHTTPRoute %s/%s: %v", ns, name, err)
	}
	return r
}

func createRoute(t *testing.T, r *unstructured.Unstructured) {
	t.Helper()
	if _, err := env.dyn.Resource(virtualingress.RouteGVR).Namespace(r.GetNamespace()).Create(context.Background(), r, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating VirtualHTTPRoute %s/%s: %v", r.GetNamespace(), r.GetName(), err)
	}
}

// routeBackendRefs lists "service:port" for every backendRef of an HTTPRoute, rules in order.
func routeBackendRefs(route *unstructured.Unstructured) []string {
	var refs []string
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	for _, r := range rules {
		backendRefs, _, _ := unstructured.NestedSlice(r.(map[string]any), "backendRefs")
		for _, b := range backendRefs {
			ref := b.(map[string]any)
			refs = append(refs, fmt.Sprintf("%v:%v", ref["name"], ref["port"]))
		}
	}
	return refs
}

// waitHTTPRoute waits until the HTTPRoute exists with exactly these backendRefs ("service:port").
func waitHTTPRoute(t *testing.T, ns, name string, want ...string) *unstructured.Unstructured {
	t.Helper()
	var route *unstructured.Unstructured
	eventually(t, "HTTPRoute "+ns+"/"+name+" with backendRefs "+strings.Join(want, ","), func() (bool, string, error) {
		r, err := env.dyn.Resource(virtualingress.HTTPRouteGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not found", nil
		}
		if err != nil {
			return false, "", err
		}
		route = r
		got := routeBackendRefs(r)
		return strings.Join(got, ",") == strings.Join(want, ","), strings.Join(got, ","), nil
	})
	return route
}

// resolvedCoderRoute creates a CCM-style Service and the coder VirtualHTTPRoute selecting it, and waits for the
// generated HTTPRoute, as resolvedCoder does for VirtualIngresses.
func resolvedCoderRoute(t *testing.T, ns string) (service string, route *unstructured.Unstructured) {
	t.Helper()
	service = ccmName(t)
	createService(t, ns, service, relayLabels())
	createRoute(t, virtualingress.NewRoute(ns, "coder", virtualingress.CoderRouteSpec(relayLabels())))
	return service, waitHTTPRoute(t, ns, virtualingress.GeneratedName("coder"), service+":80")
}

func assertNoHTTPRoute(t *testing.T, ns, name string) {
	t.Helper()
	_, err := env.dyn.Resource(virtualingress.HTTPRouteGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("HTTPRoute %s/%s: %v, want none", ns, name, err)
	}
}

// testRouteResolved: the coder route asks for port "http"; the Service's http port is 8443, which the HTTPRoute gets,
// with the Service's generated name, an ownerReference and the back-reference label. The second, named backendRef is
// copied as written.
func testRouteResolved(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-route")
	service := ccmName(t)
	createServiceWithPorts(t, ns, service, relayLabels(),
		corev1.ServicePort{Name: "metrics", Port: 9090}, corev1.ServicePort{Name: "http", Port: 8443})
	spec := virtualingress.CoderRouteSpec(relayLabels())
	rules := spec["rules"].([]any)
	spec["rules"] = append(rules, map[string]any{
		"matches":     []any{map[string]any{"path": map[string]any{"type": "Exact", "value": "/healthz"}}},
		"backendRefs": []any{map[string]any{"name": "coder-health", "port": int64(8080), "weight": int64(3)}},
	})
	vhr := virtualingress.NewRoute(ns, "coder", spec)
	vhr.SetLabels(map[string]string{"team": "platform"})
	createRoute(t, vhr)

	route := waitHTTPRoute(t, ns, virtualingress.GeneratedName("coder"), service+":8443", "coder-health:8080")
	owner := getRoute(t, ns, "coder")
	if refs := route.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != owner.GetUID() || refs[0].Kind != "VirtualHTTPRoute" {
		t.Errorf("ownerReferences %+v, want the VirtualHTTPRoute %s", refs, owner.GetUID())
	}
	if got := route.GetLabels(); got["virtual-ingress.io/virtualhttproute"] != "coder" || got["team"] != "platform" {
		t.Errorf("labels %v, want team=platform and the back-reference", got)
	}
	if hosts, _, _ := unstructured.NestedStringSlice(route.Object, "spec", "hostnames"); strings.Join(hosts, ",") != "coder.enigma.vgijssel.nl" {
		t.Errorf("hostnames %v", hosts)
	}
	status, reason, _ := virtualingress.Condition(owner, "Resolved")
	if status != "True" || reason != "Resolved" {
		t.Errorf("Resolved %s/%s, want True/Resolved", status, reason)
	}
}

// verbatimValue looks like a Kyverno variable (and like an escaped one): user data that must reach the HTTPRoute as
// written, never evaluated by a policy.
const verbatimValue = "x-{{ request.userInfo.username }}-\\{{ escaped }}-${HOME}"

// assertVerbatim checks that the header match and the annotation carrying verbatimValue arrived as written.
func assertVerbatim(t *testing.T, route *unstructured.Unstructured) {
	t.Helper()
	if got := route.GetAnnotations()["example.com/note"]; got != verbatimValue {
		t.Errorf("annotation example.com/note %q, want %q", got, verbatimValue)
	}
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	var header string
	if len(rules) > 0 {
		matches, _, _ := unstructured.NestedSlice(rules[0].(map[string]any), "matches")
		if len(matches) > 0 {
			headers, _, _ := unstructured.NestedSlice(matches[0].(map[string]any), "headers")
			if len(headers) > 0 {
				header, _, _ = unstructured.NestedString(headers[0].(map[string]any), "value")
			}
		}
	}
	if header != verbatimValue {
		t.Errorf("header match value %q, want %q", header, verbatimValue)
	}
}

// testRouteServiceRecreated: the CCM recreates the Service under a new name; the HTTPRoute follows. Then the Service
// goes for good: the route keeps the last Service (Stale), never emptied. The route carries a header match and an
// annotation that look like Kyverno variables: they reach the HTTPRoute as written on create and on every
// re-resolution (which carries the stored route over).
func testRouteServiceRecreated(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-route-recreate")
	first := ccmName(t)
	createService(t, ns, first, relayLabels())
	spec := virtualingress.CoderRouteSpec(relayLabels())
	rule := spec["rules"].([]any)[0].(map[string]any)
	rule["matches"].([]any)[0].(map[string]any)["headers"] = []any{map[string]any{"name": "x-user", "value": verbatimValue}}
	vhr := virtualingress.NewRoute(ns, "coder", spec)
	vhr.SetAnnotations(map[string]string{"example.com/note": verbatimValue})
	createRoute(t, vhr)
	assertVerbatim(t, waitHTTPRoute(t, ns, virtualingress.GeneratedName("coder"), first+":80"))

	deleteService(t, ns, first)
	second := ccmName(t)
	createService(t, ns, second, relayLabels())
	assertVerbatim(t, waitHTTPRoute(t, ns, virtualingress.GeneratedName("coder"), second+":80"))

	deleteService(t, ns, second)
	eventually(t, "Resolved=False Stale", func() (bool, string, error) {
		status, reason, message := virtualingress.Condition(getRoute(t, ns, "coder"), "Resolved")
		return status == "False" && reason == "Stale", status + " " + reason + ": " + message, nil
	})
	waitHTTPRoute(t, ns, virtualingress.GeneratedName("coder"), second+":80")
}

// testRouteWriteRights: a subject with VirtualHTTPRoute and Service rights but no HTTPRoute rights is refused (Kyverno
// would create the HTTPRoute with its own rights); given HTTPRoute write, the same request passes.
func testRouteWriteRights(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-route-rights")
	service := ccmName(t)
	createService(t, ns, service, relayLabels())
	role := func(name string, rules ...rbacv1.PolicyRule) {
		if _, err := env.kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	role("virtualhttproutes-only",
		rbacv1.PolicyRule{APIGroups: []string{"virtual-ingress.io"}, Resources: []string{"virtualhttproutes"}, Verbs: []string{"*"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch"}})
	role("httproutes", rbacv1.PolicyRule{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"httproutes"}, Verbs: []string{"*"}})
	mallory := newSubject(t, ns, "mallory")
	bind(t, ns, "mallory", "Role", "virtualhttproutes-only")

	// The premise: mallory may not write HTTPRoutes.
	direct := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": "direct", "namespace": ns},
		"spec":     map[string]any{"parentRefs": []any{map[string]any{"name": "tenant-root"}}},
	}}
	_, err := mallory.dyn.Resource(virtualingress.HTTPRouteGVR).Namespace(ns).Create(ctx, direct, metav1.CreateOptions{})
	wantForbidden(t, "mallory creating an HTTPRoute", err, "forbidden")

	bank := virtualingress.NewRoute(ns, "bank", virtualingress.CoderRouteSpec(relayLabels()))
	_, err = mallory.dyn.Resource(virtualingress.RouteGVR).Namespace(ns).Create(ctx, bank, metav1.CreateOptions{})
	wantForbidden(t, "mallory creating a VirtualHTTPRoute", err, "may not create HTTPRoutes in namespace "+ns)
	assertNoHTTPRoute(t, ns, virtualingress.GeneratedName("bank"))

	bind(t, ns, "mallory", "Role", "httproutes")
	eventually(t, "mallory's VirtualHTTPRoute accepted once she may write HTTPRoutes", func() (bool, string, error) {
		_, err := mallory.dyn.Resource(virtualingress.RouteGVR).Namespace(ns).Create(ctx, bank, metav1.CreateOptions{})
		return err == nil, errString(err), nil
	})
	waitHTTPRoute(t, ns, virtualingress.GeneratedName("bank"), service+":80")
}

// testRouteNameTaken: an HTTPRoute of another team holds the generated name; the VirtualHTTPRoute is refused and the
// other route is left exactly as it was.
func testRouteNameTaken(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-route-taken")
	createService(t, ns, "shop-v1", map[string]string{"app": "shop"})
	theirs, err := env.dyn.Resource(virtualingress.HTTPRouteGVR).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": virtualingress.GeneratedName("shop"), "namespace": ns},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "theirs"}},
			"rules":      []any{map[string]any{"backendRefs": []any{map[string]any{"name": "their-service", "port": int64(80)}}}},
		},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.dyn.Resource(virtualingress.RouteGVR).Namespace(ns).Create(ctx,
		virtualingress.NewRoute(ns, "shop", virtualingress.CoderRouteSpec(map[string]string{"app": "shop"})), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "HTTPRoute "+virtualingress.GeneratedName("shop")+" already exists") ||
		!strings.Contains(err.Error(), "never takes over an HTTPRoute") {
		t.Fatalf("creating a VirtualHTTPRoute whose HTTPRoute name is taken: got %v, want a refusal naming the route", err)
	}
	time.Sleep(2 * time.Second)
	now, err := env.dyn.Resource(virtualingress.HTTPRouteGVR).Namespace(ns).Get(ctx, virtualingress.GeneratedName("shop"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if now.GetResourceVersion() != theirs.GetResourceVersion() || len(now.GetOwnerReferences()) != 0 {
		t.Fatalf("the other team's HTTPRoute changed: resourceVersion %s -> %s, owners %v",
			theirs.GetResourceVersion(), now.GetResourceVersion(), now.GetOwnerReferences())
	}
	createRoute(t, virtualingress.NewRoute(ns, "shop2", virtualingress.CoderRouteSpec(map[string]string{"app": "shop"})))
	waitHTTPRoute(t, ns, virtualingress.GeneratedName("shop2"), "shop-v1:80")
}

// testRouteBadInput: what HTTPRoute's schema refuses, and what only makes sense for a label-selected backendRef, is
// refused when the VirtualHTTPRoute is written.
func testRouteBadInput(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-route-invalid")
	withRef := func(ref map[string]any) map[string]any {
		spec := virtualingress.CoderRouteSpec(relayLabels())
		spec["rules"].([]any)[0].(map[string]any)["backendRefs"] = []any{ref}
		return spec
	}
	selecting := func(extra map[string]any) map[string]any {
		ref := virtualingress.SelectorBackendRef(map[string]string{"a": "b"}, "http")
		for k, v := range extra {
			ref[k] = v
		}
		return withRef(ref)
	}
	manyRefs := func(n int) map[string]any {
		spec := virtualingress.CoderRouteSpec(relayLabels())
		var rules []any
		for len(rules)*16 < n {
			var refs []any
			for i := 0; i < 16 && len(rules)*16+i < n; i++ {
				refs = append(refs, virtualingress.SelectorBackendRef(map[string]string{"a": "b"}, int64(80)))
			}
			rules = append(rules, map[string]any{"backendRefs": refs})
		}
		spec["rules"] = rules
		return spec
	}
	hostname := virtualingress.CoderRouteSpec(relayLabels())
	hostname["hostnames"] = []any{"a b;{}"}
	cases := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"name and matchLabels", selecting(map[string]any{"name": "a"}), []string{"exactly one of name or matchLabels must be set"}},
		{"matchLabels in another namespace", selecting(map[string]any{"namespace": "other"}), []string{"matchLabels selects a Service of the VirtualHTTPRoute's own namespace"}},
		{"named port on a named backendRef", withRef(map[string]any{"name": "a", "port": "http"}), []string{"port may be a name only with matchLabels"}},
		{"port name AB_;{}", selecting(map[string]any{"port": "AB_;{}"}), []string{"a named port must be a Service port name"}},
		{"Service without port", withRef(map[string]any{"name": "a"}), []string{"Must have port for Service reference"}},
		{"hostname a b;{}", hostname, []string{"spec.hostnames[0]"}},
		{"33 label-selected backendRefs", manyRefs(33), []string{"at most 32 backendRefs may select their Service by matchLabels"}},
	}
	for i, c := range cases {
		_, err := env.dyn.Resource(virtualingress.RouteGVR).Namespace(ns).Create(context.Background(),
			virtualingress.NewRoute(ns, fmt.Sprintf("bad-%d", i), c.spec), metav1.CreateOptions{FieldValidation: "Strict"})
		assertRefusal(t, c.name, err, c.want)
	}
	list, err := env.dyn.Resource(virtualingress.RouteGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Fatalf("rejected input left %d VirtualHTTPRoutes", len(list.Items))
	}
}

// testRouteGatewayVerdict: Ready is True only once every parent Gateway accepted the generated HTTPRoute and resolved
// its references, as the route's status.parents says. The devcluster runs no Gateway controller (one needs its data
// plane), so the test writes the HTTPRoute's status as a Gateway controller does, through the status subresource.
func testRouteGatewayVerdict(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-route-gateway")
	_, route := resolvedCoderRoute(t, ns)
	waitRouteReady(t, ns, "coder", "False", "NoGatewayStatus")

	setParents := func(accepted, resolvedRefs string) {
		t.Helper()
		eventually(t, "HTTPRoute status written", func() (bool, string, error) {
			r, err := env.dyn.Resource(virtualingress.HTTPRouteGVR).Namespace(ns).Get(context.Background(), route.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			now := metav1.Now().UTC().Format(time.RFC3339)
			condition := func(kind, status, reason string) map[string]any {
				return map[string]any{"type": kind, "status": status, "reason": reason, "message": kind + " is " + status,
					"lastTransitionTime": now, "observedGeneration": r.GetGeneration()}
			}
			reason := "Accepted"
			if accepted != "True" {
				reason = "NotAllowedByListeners"
			}
			r.Object["status"] = map[string]any{"parents": []any{map[string]any{
				"parentRef":      map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "tenant-root"},
				"controllerName": "example.com/gateway-controller",
				"conditions":     []any{condition("Accepted", accepted, reason), condition("ResolvedRefs", resolvedRefs, "ResolvedRefs")},
			}}}
			_, err = env.dyn.Resource(virtualingress.HTTPRouteGVR).Namespace(ns).UpdateStatus(context.Background(), r, metav1.UpdateOptions{})
			return err == nil, errString(err), nil
		})
	}
	setParents("True", "True")
	vhr := waitRouteReady(t, ns, "coder", "True", "HTTPRouteUpToDate")
	parents, _, _ := unstructured.NestedSlice(vhr.Object, "status", "parents")
	if len(parents) != 1 || parents[0].(map[string]any)["parentRef"] != ns+"/tenant-root" || parents[0].(map[string]any)["accepted"] != "True" {
		t.Fatalf("status.parents %v, want the Gateway %s/tenant-root accepting", parents, ns)
	}

	// A second parent whose Gateway never reports keeps Ready false, naming it, although the first accepted: first
	// because the first parent's entry is now for the route's previous generation, then, once it reports again,
	// because the second has no entry at all.
	eventually(t, "a second parentRef added to the VirtualHTTPRoute", func() (bool, string, error) {
		vhr := getRoute(t, ns, "coder")
		refs, _, _ := unstructured.NestedSlice(vhr.Object, "spec", "parentRefs")
		_ = unstructured.SetNestedSlice(vhr.Object, append(refs, map[string]any{"name": "ghost-gw"}), "spec", "parentRefs")
		_, err := env.dyn.Resource(virtualingress.RouteGVR).Namespace(ns).Update(context.Background(), vhr, metav1.UpdateOptions{})
		return err == nil, errString(err), nil
	})
	waitRouteReadyMessage(t, ns, "coder", "NoGatewayStatus", "/tenant-root", "reported on generation 1")
	eventually(t, "the generated HTTPRoute naming both parents", func() (bool, string, error) {
		r, err := env.dyn.Resource(virtualingress.HTTPRouteGVR).Namespace(ns).Get(context.Background(), route.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		refs, _, _ := unstructured.NestedSlice(r.Object, "spec", "parentRefs")
		return len(refs) == 2, fmt.Sprint(refs), nil
	})
	setParents("True", "True")
	waitRouteReadyMessage(t, ns, "coder", "NoGatewayStatus", "parent "+ns+"/ghost-gw")

	setParents("False", "True")
	vhr = waitRouteReady(t, ns, "coder", "False", "NotAccepted")
	if _, _, message := virtualingress.Condition(vhr, "Ready"); !strings.Contains(message, "NotAllowedByListeners") {
		t.Fatalf("Ready message %q does not say why the Gateway refused", message)
	}
}

// waitRouteReadyMessage waits for Ready=False with the reason and a message holding every one of parts.
func waitRouteReadyMessage(t *testing.T, ns, name, reason string, parts ...string) {
	t.Helper()
	eventually(t, fmt.Sprintf("VirtualHTTPRoute %s/%s Ready=False %s saying %q", ns, name, reason, parts), func() (bool, string, error) {
		s, why, message := virtualingress.Condition(getRoute(t, ns, name), "Ready")
		ok := s == "False" && why == reason
		for _, p := range parts {
			ok = ok && strings.Contains(message, p)
		}
		return ok, s + " " + why + ": " + message, nil
	})
}

// waitRouteReady waits for the VirtualHTTPRoute's Ready condition.
func waitRouteReady(t *testing.T, ns, name, status, reason string) *unstructured.Unstructured {
	t.Helper()
	var r *unstructured.Unstructured
	eventually(t, fmt.Sprintf("VirtualHTTPRoute %s/%s Ready=%s %s", ns, name, status, reason), func() (bool, string, error) {
		r = getRoute(t, ns, name)
		s, why, message := virtualingress.Condition(r, "Ready")
		return s == status && why == reason, s + " " + why + ": " + message, nil
	})
	return r
}
