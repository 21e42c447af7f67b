package chart

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

var (
	viGVK = schema.GroupVersionKind{Group: "virtual-ingress.io", Version: "v1alpha1", Kind: "VirtualIngress"}
	viGVR = schema.GroupVersionResource{Group: "virtual-ingress.io", Version: "v1alpha1", Resource: "virtualingresses"}
)

const statusController = "system:serviceaccount:" + render.Namespace + ":virtual-ingress-controller"

// TestGenerateSkipsOnlyTheStatusControllersNoOpWrites evaluates the GeneratingPolicy's matchConditions with
// kube-apiserver's own webhook match-condition code: a Ready write of the status controller that changes nothing the
// Ingress is made of makes no generation; everything that may change the Ingress does.
func TestGenerateSkipsOnlyTheStatusControllersNoOpWrites(t *testing.T) {
	resolved := func(service string, extra map[string]any) *unstructured.Unstructured {
		status := map[string]any{
			"ingress": map[string]any{"name": "shop-generated", "spec": map[string]any{"rules": []any{
				map[string]any{"host": "shop.example.com", "http": map[string]any{"paths": []any{map[string]any{
					"path": "/", "pathType": "Prefix",
					"backend": map[string]any{"service": map[string]any{"name": service, "port": map[string]any{"number": int64(80)}}},
				}}}},
			}}},
			"conditions": []any{map[string]any{"type": "Resolved", "status": "True"}},
		}
		for k, v := range extra {
			status[k] = v
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "virtual-ingress.io/v1alpha1", "kind": "VirtualIngress",
			"metadata": map[string]any{"name": "shop", "namespace": "team-a", "resourceVersion": "7"},
			"spec":     map[string]any{},
			"status":   status,
		}}
	}
	ready := map[string]any{"conditions": []any{
		map[string]any{"type": "Resolved", "status": "True"},
		map[string]any{"type": "Ready", "status": "True", "reason": "IngressUpToDate"},
	}}
	cases := []struct {
		name      string
		op        admission.Operation
		user      string
		obj, old  *unstructured.Unstructured
		wantMatch bool
	}{
		{"status controller writes Ready, nothing else changes", admission.Update, statusController,
			resolved("abc12", ready), resolved("abc12", nil), false},
		{"status controller's write re-resolved to a new Service", admission.Update, statusController,
			resolved("def34", ready), resolved("abc12", nil), true},
		{"status controller repairs (lastServiceEvent)", admission.Update, statusController,
			resolved("abc12", map[string]any{"lastServiceEvent": "repair at 2026-11-24T10:00:00Z: missing"}), resolved("abc12", nil), true},
		{"another user's identical update", admission.Update, "system:serviceaccount:team-a:deployer",
			resolved("abc12", ready), resolved("abc12", nil), true},
		{"Kyverno's background touch", admission.Update, "system:serviceaccount:kyverno:kyverno-background-controller",
			resolved("abc12", map[string]any{"lastServiceEvent": "Service abc12 deleted"}), resolved("abc12", nil), true},
		{"creation by the status controller's user name", admission.Create, statusController,
			resolved("abc12", nil), nil, true},
		{"a request without a user name (a background re-evaluation)", admission.Update, "",
			resolved("abc12", ready), resolved("abc12", nil), true},
	}
	conditions := generateMatchConditions(t)
	if len(conditions) == 0 {
		t.Fatal("the GeneratingPolicy has no matchConditions")
	}
	matcher := compileMatchConditions(t, conditions)
	for _, c := range cases {
		if got := match(t, matcher, c.op, c.user, c.obj, c.old); got != c.wantMatch {
			t.Errorf("%s: generates = %v, want %v", c.name, got, c.wantMatch)
		}
	}
}

// generateMatchConditions returns spec.matchConditions of the rendered generate GeneratingPolicy.
func generateMatchConditions(t *testing.T) []admissionregistrationv1.MatchCondition {
	t.Helper()
	docs, err := render.Render(chartDir, nil, map[string]any{"policy": map[string]any{"engine": "generatingPolicy"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.Object.GetKind() != "GeneratingPolicy" || d.Object.GetName() != "virtual-ingress-generate" {
			continue
		}
		raw, _, err := unstructured.NestedSlice(d.Object.Object, "spec", "matchConditions")
		if err != nil {
			t.Fatal(err)
		}
		var out []admissionregistrationv1.MatchCondition
		for _, r := range raw {
			m := r.(map[string]any)
			out = append(out, admissionregistrationv1.MatchCondition{Name: m["name"].(string), Expression: m["expression"].(string)})
		}
		return out
	}
	t.Fatal("no GeneratingPolicy virtual-ingress-generate rendered")
	return nil
}

// compileMatchConditions compiles as kube-apiserver does for a webhook (its accessors): stored expressions, an
// authorizer, no params. A compile error surfaces as an evaluation error (failure policy Fail), which match reports.
func compileMatchConditions(t *testing.T, conditions []admissionregistrationv1.MatchCondition) matchconditions.Matcher {
	t.Helper()
	compiler, err := celplugin.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		t.Fatal(err)
	}
	expressions := make([]celplugin.ExpressionAccessor, len(conditions))
	for i, c := range conditions {
		expressions[i] = &matchconditions.MatchCondition{Name: c.Name, Expression: c.Expression}
	}
	filter := compiler.CompileCondition(expressions, celplugin.OptionalVariableDeclarations{HasAuthorizer: true},
		environment.StoredExpressions)
	fail := admissionregistrationv1.Fail
	return matchconditions.NewMatcher(filter, &fail, "webhook", "test", "generate")
}

func match(t *testing.T, m matchconditions.Matcher, op admission.Operation, username string, obj, old *unstructured.Unstructured) bool {
	t.Helper()
	var oldObj runtime.Object
	if old != nil {
		oldObj = old
	}
	attrs := admission.NewAttributesRecord(obj, oldObj, viGVK, "team-a", "shop", viGVR, "", op, nil, false,
		&user.DefaultInfo{Name: username})
	versioned := &admission.VersionedAttributes{Attributes: attrs, VersionedKind: viGVK, VersionedObject: obj, VersionedOldObject: oldObj}
	res := m.Match(context.Background(), versioned, nil, nil)
	if res.Error != nil {
		t.Fatalf("matchCondition failed to evaluate: %v", res.Error)
	}
	return res.Matches
}
