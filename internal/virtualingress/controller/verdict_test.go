package controller

import (
	"fmt"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

const viUID = types.UID("vi-uid")

func ingressSpec(service string) *networkingv1.IngressSpec {
	return &networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
		Service: &networkingv1.IngressServiceBackend{Name: service, Port: networkingv1.ServiceBackendPort{Number: 80}},
	}}
}

func resolvedView(resolved metav1.ConditionStatus, reason string) *view {
	return &view{
		generatedName: "shop-generated",
		want:          wantedIngress{spec: ingressSpec("svc-a")},
		conditions:    []v1alpha1.Condition{{Type: ConditionResolved, Status: resolved, Reason: reason, Message: "resolve says " + reason}},
	}
}

// ingress is the state of an Ingress owned by owner ("" for none) whose backend is service, read as gather reads it.
func ingress(owner types.UID, service string) *generatedState {
	ing := &networkingv1.Ingress{Spec: *ingressSpec(service)}
	if owner != "" {
		yes := true
		ing.SetOwnerReferences([]metav1.OwnerReference{{Kind: "VirtualIngress", Name: "shop", UID: owner, Controller: &yes}})
	}
	g, err := virtualIngressKind.state(ing, wantedIngress{spec: ingressSpec("svc-a")})
	if err != nil {
		panic(err)
	}
	return g
}

func TestDecide(t *testing.T) {
	cases := []struct {
		name       string
		in         inputs
		status     metav1.ConditionStatus
		reason     string
		message    string
		transient  bool
		repairable bool
	}{
		{name: "ours and up to date", in: inputs{kind: virtualIngressKind, vi: resolvedView("True", "Resolved"), uid: viUID, generated: ingress(viUID, "svc-a")},
			status: "True", reason: ReasonUpToDate},
		{name: "never resolved", in: inputs{kind: virtualIngressKind, vi: &view{conditions: []v1alpha1.Condition{{Type: ConditionResolved, Status: "False", Reason: "Unresolved", Message: "no Service"}}}},
			status: "False", reason: "Unresolved", message: "no Service"},
		{name: "missing while Kyverno works", in: inputs{kind: virtualIngressKind, vi: resolvedView("True", "Resolved"), uid: viUID},
			status: "False", reason: ReasonMissing, transient: true, repairable: true},
		{name: "missing because generation failed", in: inputs{kind: virtualIngressKind, vi: resolvedView("True", "Resolved"), uid: viUID, failure: "denied by disallow-snippets"},
			status: "False", reason: ReasonGenerationFailed, message: "denied by disallow-snippets", repairable: true},
		{name: "someone else's Ingress", in: inputs{kind: virtualIngressKind, vi: resolvedView("True", "Resolved"), uid: viUID, generated: ingress("", "svc-a")},
			status: "False", reason: ReasonNameTaken},
		{name: "another VirtualIngress's Ingress", in: inputs{kind: virtualIngressKind, vi: resolvedView("True", "Resolved"), uid: viUID, generated: ingress("other-uid", "svc-a")},
			status: "False", reason: ReasonNameTaken},
		{name: "outdated", in: inputs{kind: virtualIngressKind, vi: resolvedView("True", "Resolved"), uid: viUID, generated: ingress(viUID, "svc-old")},
			status: "False", reason: ReasonOutOfDate, transient: true, repairable: true},
		{name: "outdated because the update failed", in: inputs{kind: virtualIngressKind, vi: resolvedView("True", "Resolved"), uid: viUID, generated: ingress(viUID, "svc-old"), failure: "webhook said no"},
			status: "False", reason: ReasonGenerationFailed, message: "could not be updated: webhook said no", repairable: true},
		{name: "stale backends keep the Ingress but are not ready", in: inputs{kind: virtualIngressKind, vi: resolvedView("False", "Stale"), uid: viUID, generated: ingress(viUID, "svc-a")},
			status: "False", reason: "Stale", message: "resolve says Stale"},
		{name: "lost Service event", in: inputs{kind: virtualIngressKind, vi: resolvedView("True", "Resolved"), uid: viUID, generated: ingress(viUID, "svc-a"), lag: "spec.defaultBackend is Resolved (svc-a)"},
			status: "False", reason: ReasonResolutionOutOfDate, transient: true, repairable: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := decide(c.in)
			if v.status != c.status || v.reason != c.reason || v.transient != c.transient || v.repairable != c.repairable {
				t.Fatalf("got %s/%s transient=%v repairable=%v (%s), want %s/%s transient=%v repairable=%v",
					v.status, v.reason, v.transient, v.repairable, v.message, c.status, c.reason, c.transient, c.repairable)
			}
			if !strings.Contains(v.message, c.message) {
				t.Fatalf("message %q lacks %q", v.message, c.message)
			}
		})
	}
}

func TestSanitizeKeepsKyvernoFromEvaluatingQuotedText(t *testing.T) {
	got := sanitize("annotation x-{{ request.userInfo.username }} refused")
	if strings.Contains(got, "{{") {
		t.Fatalf("sanitize left a variable opening: %q", got)
	}
	if long := sanitize(strings.Repeat("a", 5000)); len(long) > 1100 {
		t.Fatalf("sanitize kept %d bytes", len(long))
	}
}

func TestUpdateRequestTriggerReadsBothEnginesRequests(t *testing.T) {
	clusterPolicy := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"requestType": "generate",
		"resource":    map[string]any{"kind": "VirtualIngress", "namespace": "shop", "name": "web"},
	}}}
	cel := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"requestType": "cel-generate",
		"ruleContext": []any{map[string]any{"trigger": map[string]any{"kind": "VirtualIngress", "namespace": "shop", "name": "api"}}},
	}}}
	mutate := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"requestType": "mutate",
		"resource":    map[string]any{"kind": "VirtualIngress", "namespace": "shop", "name": "web"},
	}}}
	route := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"requestType": "cel-generate",
		"ruleContext": []any{map[string]any{"trigger": map[string]any{"kind": "VirtualHTTPRoute", "namespace": "shop", "name": "web"}}},
	}}}
	for obj, want := range map[*unstructured.Unstructured]string{
		clusterPolicy: "[VirtualIngress/shop/web]", cel: "[VirtualIngress/shop/api]", mutate: "[]", route: "[VirtualHTTPRoute/shop/web]",
	} {
		if got := fmt.Sprint(updateRequestTrigger(obj)); got != want {
			t.Errorf("%v: got %s, want %s", obj.Object, got, want)
		}
	}
}
