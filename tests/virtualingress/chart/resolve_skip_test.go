package chart

import (
	"context"
	"testing"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	kyvernov2 "github.com/kyverno/kyverno/api/kyverno/v2"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/store"
	"github.com/kyverno/kyverno/pkg/config"
	"github.com/kyverno/kyverno/pkg/engine"
	"github.com/kyverno/kyverno/pkg/engine/adapters"
	engineapi "github.com/kyverno/kyverno/pkg/engine/api"
	"github.com/kyverno/kyverno/pkg/engine/factories"
	"github.com/kyverno/kyverno/pkg/engine/jmespath"
	"github.com/kyverno/kyverno/pkg/engine/policycontext"
	imageverifycache "github.com/kyverno/kyverno/pkg/image/verification/cache"
	"github.com/kyverno/sdk/extensions/registryclient"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

var (
	routeGVK = schema.GroupVersionKind{Group: "virtual-ingress.io", Version: "v1alpha1", Kind: "VirtualHTTPRoute"}
	routeGVR = schema.GroupVersionResource{Group: "virtual-ingress.io", Version: "v1alpha1", Resource: "virtualhttproutes"}
)

// resolveCases are the writes whose resolution both engines must decide alike (virtual-ingress.statusReportJMESPath
// and virtual-ingress.resolveMatchConditions in the chart): want says that the resolve policy runs. Only the status
// controller's report of its verdict is skipped; a write of that user that changes anything else in status (above
// all status.ingress, which the generate policy copies), the labels or the spec is resolved like any other.
func resolveCases() []updateCase {
	ready := map[string]any{"conditions": []any{
		map[string]any{"type": "Resolved", "status": "True"},
		map[string]any{"type": "Ready", "status": "True"},
	}}
	with := func(u *unstructured.Unstructured, edit func(map[string]any)) *unstructured.Unstructured {
		edit(u.Object)
		return u
	}
	old := func() *unstructured.Unstructured { return resolvedVirtualIngress("abc12", nil) }
	user := "system:serviceaccount:team-a:deployer"
	return []updateCase{
		{"status controller reports Ready", admission.Update, statusController, resolvedVirtualIngress("abc12", ready), old(), false},
		{"status controller reports a route's parents", admission.Update, statusController,
			resolvedVirtualIngress("abc12", map[string]any{"parents": []any{map[string]any{"parentRef": "gateways/gw"}}}), old(), false},
		{"status controller repairs (lastServiceEvent)", admission.Update, statusController,
			resolvedVirtualIngress("abc12", map[string]any{"lastServiceEvent": "repair at 2026-11-25T10:00:00Z: missing"}), old(), true},
		{"status controller's write that changes the spec", admission.Update, statusController,
			with(resolvedVirtualIngress("abc12", ready), func(o map[string]any) { o["spec"] = map[string]any{"ingressClassName": "nginx"} }), old(), true},
		{"status controller's report that brings its own status.ingress", admission.Update, statusController,
			resolvedVirtualIngress("evil9", ready), old(), true},
		{"status controller's report that changes status.backends", admission.Update, statusController,
			resolvedVirtualIngress("abc12", map[string]any{"backends": []any{map[string]any{"field": "spec.defaultBackend", "service": "evil9", "state": "Resolved"}}}), old(), true},
		{"status controller's report that changes the Resolved condition", admission.Update, statusController,
			resolvedVirtualIngress("abc12", map[string]any{"conditions": []any{map[string]any{"type": "Resolved", "status": "False"}}}), old(), true},
		{"status controller's report that changes a label", admission.Update, statusController,
			with(resolvedVirtualIngress("abc12", ready), func(o map[string]any) {
				o["metadata"].(map[string]any)["labels"] = map[string]any{"virtual-ingress.io/name-hash": "0"}
			}), old(), true},
		{"Kyverno's touch", admission.Update, kyvernoBackground,
			resolvedVirtualIngress("abc12", map[string]any{"lastServiceEvent": "DELETE Service abc12"}), old(), true},
		{"a user's status-only update", admission.Update, user, resolvedVirtualIngress("abc12", ready), old(), true},
		{"a creation by the status controller's user name", admission.Create, statusController, resolvedVirtualIngress("abc12", nil), nil, true},
	}
}

// TestResolveSkipsOnlyTheStatusControllersReport evaluates the resolve MutatingPolicies' matchConditions (both kinds)
// with kube-apiserver's own webhook match-condition code.
func TestResolveSkipsOnlyTheStatusControllersReport(t *testing.T) {
	for _, name := range []string{"virtual-ingress-resolve", "virtual-ingress-resolve-routes"} {
		matcher := compileMatchConditions(t, policyMatchConditions(t, "MutatingPolicy", name, map[string]any{"gatewayAPI": map[string]any{"routes": true}}))
		for _, c := range resolveCases() {
			if got := match(t, matcher, c.op, c.user, c.obj, c.old); got != c.wantMatch {
				t.Errorf("%s: %s: resolves = %v, want %v", name, c.name, got, c.wantMatch)
			}
		}
	}
}

// TestClusterPolicyResolvesTheSameWrites runs the resolve ClusterPolicies (both kinds) through Kyverno's engine as
// its admission controller does: on a report every rule is skipped (the object is stored as written); on every other
// write the first rule, which starts status afresh, applies.
func TestClusterPolicyResolvesTheSameWrites(t *testing.T) {
	for _, name := range []string{"virtual-ingress-resolve", "virtual-ingress-resolve-routes"} {
		policy := clusterPolicy(t, name, map[string]any{"gatewayAPI": map[string]any{"routes": true}})
		for _, c := range resolveCases() {
			if name == "virtual-ingress-resolve-routes" {
				c.obj, c.old = asRoute(c.obj), asRoute(c.old)
			}
			rules := mutate(t, policy, c)
			if len(rules) == 0 {
				t.Fatalf("%s: %s: no rule responses", name, c.name)
			}
			if !c.wantMatch {
				for _, r := range rules {
					if r.Status() != engineapi.RuleStatusSkip {
						t.Errorf("%s: %s: rule %s is %s (%s), want every rule skipped", name, c.name, r.Name(), r.Status(), r.Message())
					}
				}
				continue
			}
			if first := rules[0]; first.Name() != "reset-status" || first.Status() != engineapi.RuleStatusPass {
				t.Errorf("%s: %s: rule %s is %s (%s), want reset-status to pass", name, c.name, first.Name(), first.Status(), first.Message())
			}
		}
	}
}

// clusterPolicy is the ClusterPolicy name the chart renders with the clusterPolicy engine and values.
func clusterPolicy(t *testing.T, name string, values map[string]any) *kyvernov1.ClusterPolicy {
	t.Helper()
	values["policy"] = map[string]any{"engine": "clusterPolicy"}
	docs, err := render.Render(chartDir, nil, values)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.Object.GetKind() != "ClusterPolicy" || d.Object.GetName() != name {
			continue
		}
		policy := &kyvernov1.ClusterPolicy{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object.Object, policy); err != nil {
			t.Fatal(err)
		}
		return policy
	}
	t.Fatalf("no ClusterPolicy %s rendered", name)
	return nil
}

// mutate is the rule responses of Kyverno's engine to the admission request of c.
func mutate(t *testing.T, policy *kyvernov1.ClusterPolicy, c updateCase) []engineapi.RuleResponse {
	t.Helper()
	eng, pc := engineFor(t, c)
	return eng.Mutate(context.Background(), pc.WithPolicy(policy)).PolicyResponse.Rules
}

// asRoute is the VirtualHTTPRoute counterpart of a VirtualIngress of resolvedVirtualIngress: status.route for
// status.ingress.
func asRoute(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	u.SetKind(routeGVK.Kind)
	if status, ok := u.Object["status"].(map[string]any); ok {
		if ingress, ok := status["ingress"]; ok {
			status["route"] = ingress
			delete(status, "ingress")
		}
	}
	return u
}

// engineFor is Kyverno's engine, offline, and the policy context of c's admission request on a VirtualIngress (or
// VirtualHTTPRoute, by c.obj's kind).
func engineFor(t *testing.T, c updateCase) (engineapi.Engine, *policycontext.PolicyContext) {
	t.Helper()
	gvk, gvr := viGVK, viGVR
	if c.obj.GetKind() == routeGVK.Kind {
		gvk, gvr = routeGVK, routeGVR
	}
	request := admissionv1.AdmissionRequest{
		Operation: admissionv1.Operation(c.op),
		Kind:      metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Resource:  metav1.GroupVersionResource{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource},
		Namespace: "team-a",
		Name:      "shop",
		UserInfo:  authenticationv1.UserInfo{Username: c.user},
		Object:    rawObject(t, c.obj),
		OldObject: rawObject(t, c.old),
	}
	cfg := config.NewDefaultConfiguration(false)
	cluster := false
	eng := engine.NewEngine(cfg, jmespath.New(cfg), nil,
		factories.DefaultRegistryClientFactory(adapters.RegistryClient(registryclient.New()), nil),
		imageverifycache.DisabledImageVerifyCache(), store.ContextLoaderFactory(&store.Store{}, nil), nil, &cluster)
	pc, err := policycontext.NewPolicyContextFromAdmissionRequest(jmespath.New(cfg), request,
		kyvernov2.RequestInfo{AdmissionUserInfo: request.UserInfo}, gvk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return eng, pc
}
