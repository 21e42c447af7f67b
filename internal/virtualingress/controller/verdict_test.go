package controller

import (
	"fmt"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

const viUID = types.UID("vi-uid")

func ingressSpec(service string) networkingv1.IngressSpec {
	return networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
		Service: &networkingv1.IngressServiceBackend{Name: service, Port: networkingv1.ServiceBackendPort{Number: 80}},
	}}
}

func resolvedView(resolved metav1.ConditionStatus, reason string) *view {
	spec := ingressSpec("svc-a")
	return &view{
		ingressName: "shop-generated",
		ingressSpec: &spec,
		conditions:  []metav1.Condition{{Type: ConditionResolved, Status: resolved, Reason: reason, Message: "resolve says " + reason}},
	}
}

func ingress(owner types.UID, service string) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "shop-generated"}, Spec: ingressSpec(service)}
	if owner != "" {
		yes := true
		ing.OwnerReferences = []metav1.OwnerReference{{Kind: "VirtualIngress", Name: "shop", UID: owner, Controller: &yes}}
	}
	return ing
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
		{name: "ours and up to date", in: inputs{vi: resolvedView("True", "Resolved"), uid: viUID, ingress: ingress(viUID, "svc-a")},
			status: "True", reason: ReasonUpToDate},
		{name: "never resolved", in: inputs{vi: &view{conditions: []metav1.Condition{{Type: ConditionResolved, Status: "False", Reason: "Unresolved", Message: "no Service"}}}},
			status: "False", reason: "Unresolved", message: "no Service"},
		{name: "missing while Kyverno works", in: inputs{vi: resolvedView("True", "Resolved"), uid: viUID},
			status: "False", reason: ReasonMissing, transient: true, repairable: true},
		{name: "missing because generation failed", in: inputs{vi: resolvedView("True", "Resolved"), uid: viUID, failure: "denied by disallow-snippets"},
			status: "False", reason: ReasonGenerationFailed, message: "denied by disallow-snippets", repairable: true},
		{name: "someone else's Ingress", in: inputs{vi: resolvedView("True", "Resolved"), uid: viUID, ingress: ingress("", "svc-a")},
			status: "False", reason: ReasonNameTaken},
		{name: "another VirtualIngress's Ingress", in: inputs{vi: resolvedView("True", "Resolved"), uid: viUID, ingress: ingress("other-uid", "svc-a")},
			status: "False", reason: ReasonNameTaken},
		{name: "outdated", in: inputs{vi: resolvedView("True", "Resolved"), uid: viUID, ingress: ingress(viUID, "svc-old")},
			status: "False", reason: ReasonOutOfDate, transient: true, repairable: true},
		{name: "outdated because the update failed", in: inputs{vi: resolvedView("True", "Resolved"), uid: viUID, ingress: ingress(viUID, "svc-old"), failure: "webhook said no"},
			status: "False", reason: ReasonGenerationFailed, message: "could not be updated: webhook said no", repairable: true},
		{name: "stale backends keep the Ingress but are not ready", in: inputs{vi: resolvedView("False", "Stale"), uid: viUID, ingress: ingress(viUID, "svc-a")},
			status: "False", reason: "Stale", message: "resolve says Stale"},
		{name: "lost Service event", in: inputs{vi: resolvedView("True", "Resolved"), uid: viUID, ingress: ingress(viUID, "svc-a"), lag: "spec.defaultBackend is Resolved (svc-a)"},
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
	for obj, want := range map[*unstructured.Unstructured]string{clusterPolicy: "[shop/web]", cel: "[shop/api]", mutate: "[]"} {
		if got := fmt.Sprint(updateRequestTrigger(obj)); got != want {
			t.Errorf("%v: got %s, want %s", obj.Object, got, want)
		}
	}
}
