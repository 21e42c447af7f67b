//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

// testRestartWritesNothing: every start of Kyverno's background controller hands the service-events policies every
// existing Service as if it had been updated. Nothing happened to them: no VirtualIngress may be written because of
// it, nor any UpdateRequest made for them, and a Service recreated right after the restart is still followed. Nor
// may the generate policies queue a pass over every VirtualIngress (generateExisting, off): the generatingPolicy
// engine makes no request for them at all, and the clusterPolicy engine one per Ingress, Kyverno's re-sync of what a
// synchronized generate rule made (which it does on every start, and without which it would never update one).
func testRestartWritesNothing(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-sweep")
	const count = 5
	for i := range count {
		labels := map[string]string{"app": fmt.Sprintf("app-%d", i)}
		createService(t, ns, ccmName(t), labels)
		createVirtualIngress(t, virtualIngress(ns, fmt.Sprintf("vi-%d", i), virtualingress.CoderSpec(labels)))
	}
	for i := range count {
		waitReady(t, ns, fmt.Sprintf("vi-%d", i), "True", "IngressUpToDate")
	}
	waitUpdateRequestsDrained(t)
	before := resourceVersions(t, ns)

	requests := watchUpdateRequests(t, ns)
	startBackground := stopBackgroundController(t)
	startBackground()
	// The start-up sweep makes its requests within a second or two of the policies loading; none may concern this
	// namespace's Services, which did not change (the policy's exclude rule keeps them out of it).
	time.Sleep(5 * time.Second)
	made := requests()
	if byService := made["Service"]; len(byService) > 0 {
		t.Errorf("the background controller's restart made %d UpdateRequests for this namespace's unchanged Services: %s",
			len(byService), strings.Join(byService, ", "))
	}
	perSource := 0
	if env.engine == policyengine.ClusterPolicy {
		perSource = 1
	}
	counts := map[string]int{}
	for _, request := range made["VirtualIngress"] {
		counts[request]++
	}
	for request, n := range counts {
		if n > perSource {
			t.Errorf("the background controller's restart made %d requests %s under the %s engine, want at most %d",
				n, request, env.engine, perSource)
		}
	}
	// The last VirtualIngress's Service is recreated right after the restart: the real event is followed.
	labels := map[string]string{"app": fmt.Sprintf("app-%d", count-1)}
	ing, err := getIngress(ns, virtualingress.GeneratedName(fmt.Sprintf("vi-%d", count-1)))
	if err != nil {
		t.Fatal(err)
	}
	deleteService(t, ns, ingressServices(ing)[0])
	second := ccmName(t)
	createService(t, ns, second, labels)
	waitIngressServices(t, ns, virtualingress.GeneratedName(fmt.Sprintf("vi-%d", count-1)), second)
	// The restart's requests were made before the recreation's; give any stragglers time to land.
	time.Sleep(5 * time.Second)
	waitUpdateRequestsDrained(t)

	after := resourceVersions(t, ns)
	var written []string
	for name, rv := range before {
		if name != fmt.Sprintf("vi-%d", count-1) && after[name] != rv {
			written = append(written, name)
		}
	}
	if len(written) > 0 {
		t.Fatalf("VirtualIngresses written by the background controller's restart, though none of their Services changed: %s",
			strings.Join(written, ", "))
	}
}

// watchUpdateRequests starts watching Kyverno's UpdateRequests; the function it returns lists those created since
// for triggers in ns, by the trigger's kind, as policy/kind/namespace/UID (else name), one entry per rule context (a request of
// Kyverno's start-up work carries many triggers).
func watchUpdateRequests(t *testing.T, ns string) func() map[string][]string {
	t.Helper()
	urs := env.dyn.Resource(devcluster.UpdateRequestGVR).Namespace(devcluster.KyvernoNamespace)
	// From the list's resourceVersion: a watch from none would first replay every UpdateRequest that exists, and
	// Kyverno keeps completed ones (this namespace's own generations among them) for a while.
	existing, err := urs.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := urs.Watch(context.Background(), metav1.ListOptions{ResourceVersion: existing.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return func() map[string][]string {
		made := map[string][]string{}
		for {
			select {
			case ev, open := <-w.ResultChan():
				if !open {
					t.Fatal("the watch of UpdateRequests closed")
				}
				ur, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || ev.Type != watch.Added {
					continue
				}
				policy, _, _ := unstructured.NestedString(ur.Object, "spec", "policy")
				for _, trigger := range updateRequestTriggers(ur) {
					if trigger["namespace"] != ns {
						continue
					}
					// By UID: the clusterPolicy engine's start-up re-sync names a trigger by nothing else (Kyverno
					// reads it from the generated object's labels), and a generateExisting request would name the
					// same VirtualIngress by name and UID.
					id := trigger["uid"]
					if id == nil || id == "" {
						id = trigger["name"]
					}
					made[fmt.Sprint(trigger["kind"])] = append(made[fmt.Sprint(trigger["kind"])],
						fmt.Sprintf("%s/%v/%v/%v", policy, trigger["kind"], trigger["namespace"], id))
				}
			default:
				return made
			}
		}
	}
}

// updateRequestTriggers are the triggers of an UpdateRequest: its rule contexts', else spec.resource.
func updateRequestTriggers(ur *unstructured.Unstructured) []map[string]any {
	contexts, _, _ := unstructured.NestedSlice(ur.Object, "spec", "ruleContext")
	var out []map[string]any
	for _, c := range contexts {
		if m, ok := c.(map[string]any); ok {
			if trigger, _, _ := unstructured.NestedMap(m, "trigger"); trigger != nil {
				out = append(out, trigger)
			}
		}
	}
	if len(out) == 0 {
		trigger, _, _ := unstructured.NestedMap(ur.Object, "spec", "resource")
		out = append(out, trigger)
	}
	return out
}

// resourceVersions maps each VirtualIngress of the namespace to its resourceVersion.
func resourceVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	list, err := env.dyn.Resource(virtualIngressGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, vi := range list.Items {
		out[vi.GetName()] = vi.GetResourceVersion()
	}
	return out
}
