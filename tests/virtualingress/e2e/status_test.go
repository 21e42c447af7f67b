//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// testIngressNameTaken: a VirtualIngress whose Ingress name another team's Ingress holds is refused, and that Ingress
// is left exactly as it was (the clusterPolicy engine's generate would otherwise rewrite and adopt it, and delete it
// with the VirtualIngress).
func testIngressNameTaken(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-taken")
	createService(t, ns, "shop-v1", map[string]string{"app": "shop"})
	pathType := networkingv1.PathTypePrefix
	theirs, err := env.kube.NetworkingV1().Ingresses(ns).Create(context.Background(), &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: virtualingress.GeneratedName("shop"), Namespace: ns},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "theirs.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &pathType, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: "their-service", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.dyn.Resource(virtualIngressGVR).Namespace(ns).Create(context.Background(),
		virtualIngress(ns, "shop", virtualingress.CoderSpec(map[string]string{"app": "shop"})), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "Ingress "+virtualingress.GeneratedName("shop")+" already exists") ||
		!strings.Contains(err.Error(), "never takes over an Ingress") {
		t.Fatalf("creating a VirtualIngress whose Ingress name is taken: got %v, want a refusal naming the Ingress", err)
	}
	// Give Kyverno time to act if it had been handed the request anyway.
	time.Sleep(2 * time.Second)
	now, err := getIngress(ns, virtualingress.GeneratedName("shop"))
	if err != nil {
		t.Fatal(err)
	}
	if now.ResourceVersion != theirs.ResourceVersion || len(now.OwnerReferences) != 0 {
		t.Fatalf("the other team's Ingress changed: resourceVersion %s -> %s, owners %v",
			theirs.ResourceVersion, now.ResourceVersion, now.OwnerReferences)
	}
	// Another name is free: the same spec works.
	createVirtualIngress(t, virtualIngress(ns, "shop2", virtualingress.CoderSpec(map[string]string{"app": "shop"})))
	waitIngressServices(t, ns, virtualingress.GeneratedName("shop2"), "shop-v1")
	waitReady(t, ns, "shop2", "True", "IngressUpToDate")
}

// testGenerationRefused: another admission policy refuses the Ingress Kyverno generates (a stand-in for a "disallow
// snippets" rule). The VirtualIngress resolves, but Ready says the Ingress could not be created and why, and an Event
// says so too. Once the offending annotation goes, the Ingress comes and Ready turns True.
func testGenerationRefused(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-refused")
	refuseAnnotatedIngresses(t, ns, "e2e.virtual-ingress.io/refuse-me")
	service := ccmName(t)
	createService(t, ns, service, relayLabels())
	vi := virtualIngress(ns, "coder", virtualingress.CoderSpec(relayLabels()))
	vi.SetAnnotations(map[string]string{"e2e.virtual-ingress.io/refuse-me": "yes"})
	createVirtualIngress(t, vi)
	// Kyverno's background controller may take up the request before the API server has stored the VirtualIngress;
	// that attempt fails with "trigger resource ... not found", and the retry meets the denial.
	var got *unstructured.Unstructured
	eventually(t, "Ready=False GenerationFailed carrying the admission denial", func() (bool, string, error) {
		got = getVirtualIngress(t, ns, "coder")
		status, reason, message := virtualingress.Condition(got, "Ready")
		return status == "False" && reason == "GenerationFailed" && strings.Contains(message, "refused by the e2e policy"),
			status + " " + reason + ": " + message, nil
	})
	if status, _, _ := virtualingress.Condition(got, "Resolved"); status != "True" {
		t.Fatalf("Resolved=%s, want True: only the Ingress failed", status)
	}
	assertNoIngress(t, ns, virtualingress.GeneratedName("coder"))
	waitEvent(t, ns, "coder", "GenerationFailed")

	// A client cannot claim the Ingress works: a Ready condition it writes is dropped by the resolve policy.
	var stored *unstructured.Unstructured
	eventually(t, "a client's write of Ready=True stored", func() (bool, string, error) {
		forged := getVirtualIngress(t, ns, "coder")
		if err := unstructured.SetNestedSlice(forged.Object, []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "IngressUpToDate", "message": "forged",
		}}, "status", "conditions"); err != nil {
			return false, "", err
		}
		var err error
		stored, err = env.dyn.Resource(virtualIngressGVR).Namespace(ns).Update(context.Background(), forged, metav1.UpdateOptions{})
		return err == nil, errString(err), nil
	})
	if status, reason, _ := virtualingress.Condition(stored, "Ready"); status != "False" || reason != "GenerationFailed" {
		t.Fatalf("after a client wrote Ready=True: Ready=%s/%s, want the controller's False/GenerationFailed", status, reason)
	}

	eventually(t, "the annotation removed", func() (bool, string, error) {
		current := getVirtualIngress(t, ns, "coder")
		current.SetAnnotations(nil)
		_, err := env.dyn.Resource(virtualIngressGVR).Namespace(ns).Update(context.Background(), current, metav1.UpdateOptions{})
		return err == nil, errString(err), nil
	})
	waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), service)
	waitReady(t, ns, "coder", "True", "IngressUpToDate")
	waitEvent(t, ns, "coder", "IngressUpToDate")
}

// refuseAnnotatedIngresses installs a ValidatingAdmissionPolicy that refuses Ingresses carrying annotation in ns, and
// waits until the API server enforces it.
func refuseAnnotatedIngresses(t *testing.T, ns, annotation string) {
	t.Helper()
	name := "e2e-refuse-" + ns
	policies := env.kube.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	_, err := policies.Create(context.Background(), &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{"networking.k8s.io"}, APIVersions: []string{"v1"},
						Resources: []string{"ingresses"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("!has(object.metadata.annotations) || !(%q in object.metadata.annotations)", annotation),
				Message:    "refused by the e2e policy: annotation " + annotation,
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bindings := env.kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	_, err = bindings.Create(context.Background(), &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = bindings.Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = policies.Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	probe := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns, Annotations: map[string]string{annotation: "probe"}},
		Spec:       networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "x", Port: networkingv1.ServiceBackendPort{Number: 80}}}},
	}
	eventually(t, "the e2e Ingress policy to be enforced", func() (bool, string, error) {
		_, err := env.kube.NetworkingV1().Ingresses(ns).Create(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "refused by the e2e policy"), errString(err), nil
	})
}

// waitEvent waits for an Event with this reason about the VirtualIngress.
func waitEvent(t *testing.T, ns, name, reason string) {
	t.Helper()
	eventually(t, fmt.Sprintf("Event %s on VirtualIngress %s/%s", reason, ns, name), func() (bool, string, error) {
		seen, err := eventReasons(ns, name)
		return slices.Contains(seen, reason), fmt.Sprint(seen), err
	})
}

// eventReasons lists the reasons of the Events about the VirtualIngress ns/name.
func eventReasons(ns, name string) ([]string, error) {
	events, err := env.kube.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var reasons []string
	for _, e := range events.Items {
		if e.Regarding.Kind == "VirtualIngress" && e.Regarding.Name == name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons, nil
}

// testSkippedRequestsRepaired: Kyverno drops generation requests when its queue is over updateRequestThreshold. With
// the threshold at 0 every request is dropped; the VirtualIngress resolves but gets no Ingress, and Ready says so.
// Once Kyverno takes requests again, the status controller's repair (a write of the VirtualIngress) brings the Ingress
// without anyone touching the VirtualIngress.
func testSkippedRequestsRepaired(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-skipped")
	service := ccmName(t)
	createService(t, ns, service, relayLabels())
	skippedBefore := countInLog(t, devcluster.ComponentKyverno, "UpdateRequest creation skipped")
	setUpdateRequestThreshold(t, "0")
	t.Cleanup(func() { setUpdateRequestThreshold(t, "1000") })
	// Kyverno reloads its ConfigMap through a watch; give it that moment.
	time.Sleep(3 * time.Second)

	createVirtualIngress(t, virtualIngress(ns, "coder", virtualingress.CoderSpec(relayLabels())))
	vi := waitReady(t, ns, "coder", "False", "IngressMissing")
	if status, _, _ := virtualingress.Condition(vi, "Resolved"); status != "True" {
		t.Fatalf("Resolved=%s, want True", status)
	}
	assertNoIngress(t, ns, virtualingress.GeneratedName("coder"))
	// Kyverno creates a write's UpdateRequest after admission has answered; the Ready write just observed may still be
	// on its way to the threshold. Raising the threshold under it would let that write generate the Ingress.
	skipped := settledCount(t, devcluster.ComponentKyverno, "UpdateRequest creation skipped", 2*time.Second)
	if skipped <= skippedBefore {
		t.Fatalf("Kyverno skipped no UpdateRequest (%d before, %d after): the scenario did not happen", skippedBefore, skipped)
	}

	setUpdateRequestThreshold(t, "1000")
	waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), service)
	vi = waitReady(t, ns, "coder", "True", "IngressUpToDate")
	if event, _, _ := unstructured.NestedString(vi.Object, "status", "lastServiceEvent"); !strings.HasPrefix(event, "repair at ") {
		t.Fatalf("status.lastServiceEvent %q: the Ingress came without the controller's repair", event)
	}
}

func setUpdateRequestThreshold(t *testing.T, value string) {
	t.Helper()
	if err := env.cluster.SetKyvernoUpdateRequestThreshold(context.Background(), value); err != nil {
		t.Fatal(err)
	}
}

// settledCount is countInLog once it has not changed for quiet (it is asked every quiet), within convergeTimeout.
func settledCount(t *testing.T, component, text string, quiet time.Duration) int {
	t.Helper()
	last := -1 // not counted yet
	err := poll.WaitEvery(t.Context(), convergeTimeout, quiet, fmt.Sprintf("the count of %q in %s's log unchanged for %s", text, component, quiet),
		func() (bool, string, error) {
			n := countInLog(t, component, text)
			settled := n == last
			last = n
			return settled, fmt.Sprintf("%d", n), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return last
}

func countInLog(t *testing.T, component, text string) int {
	t.Helper()
	n, err := env.cluster.CountInLog(component, text)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
