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
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

var (
	viGVK = schema.GroupVersionKind{Group: "virtual-ingress.io", Version: "v1alpha1", Kind: "VirtualIngress"}
	viGVR = schema.GroupVersionResource{Group: "virtual-ingress.io", Version: "v1alpha1", Resource: "virtualingresses"}
)

const (
	statusController  = "system:serviceaccount:" + render.Namespace + ":virtual-ingress-controller"
	kyvernoBackground = "system:serviceaccount:kyverno:kyverno-background-controller"
)

// TestGenerateSkipsUpdatesThatChangeNothingGenerated evaluates the GeneratingPolicy's matchConditions with
// kube-apiserver's own webhook match-condition code: an update generates only when it changes what the Ingress is made
// of (status.ingress, labels, annotations) or is a repair (status.lastServiceEvent changed, status.serviceEvent not),
// whoever writes it; creations and re-evaluations without a stored object always generate.
func TestGenerateSkipsUpdatesThatChangeNothingGenerated(t *testing.T) {
	conditions := generateMatchConditions(t, map[string]any{})
	if len(conditions) == 0 {
		t.Fatal("the GeneratingPolicy has no matchConditions")
	}
	matcher := compileMatchConditions(t, conditions)
	for _, c := range updateCases() {
		if got := match(t, matcher, c.op, c.user, c.obj, c.old); got != c.wantMatch {
			t.Errorf("%s: generates = %v, want %v", c.name, got, c.wantMatch)
		}
	}
}

type updateCase struct {
	name      string
	op        admission.Operation
	user      string
	obj, old  *unstructured.Unstructured
	wantMatch bool
}

// updateCases are the updates whose generation both engines must decide alike (virtual-ingress.generateUpdatesJMESPath
// in the chart): wantMatch says that the update makes a generation request.
func updateCases() []updateCase {
	resolved := resolvedVirtualIngress
	ready := map[string]any{"conditions": []any{
		map[string]any{"type": "Resolved", "status": "True"},
		map[string]any{"type": "Ready", "status": "True", "reason": "IngressUpToDate"},
	}}
	touch := func(service, op string) map[string]any {
		return map[string]any{
			"lastServiceEvent": op + " Service " + service,
			"serviceEvent":     map[string]any{"operation": op, "name": service, "uid": "0000-1", "resourceVersion": "42"},
		}
	}
	withMetadata := func(u *unstructured.Unstructured, field string, values map[string]any) *unstructured.Unstructured {
		u.Object["metadata"].(map[string]any)[field] = values
		return u
	}
	return []updateCase{
		{"status controller writes Ready, nothing else changes", admission.Update, statusController,
			resolved("abc12", ready), resolved("abc12", nil), false},
		{"status controller's write re-resolved to a new Service", admission.Update, statusController,
			resolved("def34", ready), resolved("abc12", nil), true},
		{"status controller repairs (lastServiceEvent)", admission.Update, statusController,
			resolved("abc12", map[string]any{"lastServiceEvent": "repair at 2026-11-24T10:00:00Z: missing"}), resolved("abc12", nil), true},
		{"another user's update that changes nothing generated", admission.Update, "system:serviceaccount:team-a:deployer",
			resolved("abc12", ready), resolved("abc12", nil), false},
		{"a user adds a label", admission.Update, "system:serviceaccount:team-a:deployer",
			withMetadata(resolved("abc12", nil), "labels", map[string]any{"team": "a"}), resolved("abc12", nil), true},
		{"a user changes an annotation", admission.Update, "system:serviceaccount:team-a:deployer",
			withMetadata(resolved("abc12", nil), "annotations", map[string]any{"a": "2"}),
			withMetadata(resolved("abc12", nil), "annotations", map[string]any{"a": "1"}), true},
		{"Kyverno's background touch that left status.ingress alone", admission.Update, kyvernoBackground,
			resolved("abc12", touch("abc12", "DELETE")), resolved("abc12", nil), false},
		{"the same touch under another user name (Kyverno's not named in values)", admission.Update, "system:serviceaccount:kyverno:other",
			resolved("abc12", touch("abc12", "DELETE")), resolved("abc12", nil), false},
		{"Kyverno's background touch that re-resolved", admission.Update, kyvernoBackground,
			resolved("def34", touch("def34", "CREATE")), resolved("abc12", nil), true},
		{"Kyverno's background touch of a VirtualIngress resolved for the first time", admission.Update, kyvernoBackground,
			resolved("def34", nil), &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "virtual-ingress.io/v1alpha1", "kind": "VirtualIngress",
				"metadata": map[string]any{"name": "shop", "namespace": "team-a", "resourceVersion": "7"},
				"spec":     map[string]any{},
			}}, true},
		{"creation by the status controller's user name", admission.Create, statusController,
			resolved("abc12", nil), nil, true},
		{"a request without a user name (a background re-evaluation)", admission.Update, "",
			resolved("abc12", ready), nil, true},
	}
}

// resolvedVirtualIngress is a VirtualIngress whose status.ingress routes to service, with extra status fields.
func resolvedVirtualIngress(service string, extra map[string]any) *unstructured.Unstructured {
	status := map[string]any{
		"ingress": map[string]any{"name": virtualingress.GeneratedName("shop"), "spec": map[string]any{"rules": []any{
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

// TestIngressNameCheckSkipsOnlyStatusWritersUpdates: the ValidatingPolicy's live read of the Ingress is spared for
// the updates of the two writers that only touch status, never for a creation or anyone else's update.
func TestIngressNameCheckSkipsOnlyStatusWritersUpdates(t *testing.T) {
	matcher := compileMatchConditions(t, policyMatchConditions(t, "ValidatingPolicy", "virtual-ingress-ingress-name", map[string]any{}))
	obj, old := resolvedVirtualIngress("abc12", nil), resolvedVirtualIngress("abc12", nil)
	for _, c := range []struct {
		name string
		op   admission.Operation
		user string
		old  *unstructured.Unstructured
		want bool
	}{
		{"status controller's update", admission.Update, statusController, old, false},
		{"Kyverno's touch", admission.Update, kyvernoBackground, old, false},
		{"a user's update", admission.Update, "system:serviceaccount:team-a:deployer", old, true},
		{"a creation by the status controller's user name", admission.Create, statusController, nil, true},
	} {
		if got := match(t, matcher, c.op, c.user, obj, c.old); got != c.want {
			t.Errorf("%s: checked = %v, want %v", c.name, got, c.want)
		}
	}
}

// generateMatchConditions returns spec.matchConditions of the rendered generate GeneratingPolicy.
func generateMatchConditions(t *testing.T, values map[string]any) []admissionregistrationv1.MatchCondition {
	t.Helper()
	return policyMatchConditions(t, "GeneratingPolicy", "virtual-ingress-generate", values)
}

// policyMatchConditions returns spec.matchConditions of a policy the chart renders with the generatingPolicy engine.
func policyMatchConditions(t *testing.T, kind, name string, values map[string]any) []admissionregistrationv1.MatchCondition {
	t.Helper()
	values["policy"] = map[string]any{"engine": "generatingPolicy"}
	docs, err := render.Render(chartDir, nil, values)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.Object.GetKind() != kind || d.Object.GetName() != name {
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
	t.Fatalf("no %s %s rendered", kind, name)
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
