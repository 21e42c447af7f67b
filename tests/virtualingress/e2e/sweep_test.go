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
)

// testRestartWritesNothing: every start of Kyverno's background controller hands the service-events policies every
// existing Service as if it had been updated. Nothing happened to them: no VirtualIngress may be written because of
// it, nor any UpdateRequest made for them, and a Service recreated right after the restart is still followed.
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
	if made := requests(); len(made) > 0 {
		t.Errorf("the background controller's restart made %d UpdateRequests for this namespace's unchanged Services: %s",
			len(made), strings.Join(made, ", "))
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

// watchUpdateRequests starts watching Kyverno's UpdateRequests; the function it returns lists, as policy/trigger,
// those created since whose trigger is a Service of ns. (Requests triggered by the VirtualIngresses themselves, the
// generate policy's start-up pass, are the bench's restart rows' business.)
func watchUpdateRequests(t *testing.T, ns string) func() []string {
	t.Helper()
	w, err := env.dyn.Resource(devcluster.UpdateRequestGVR).Namespace(devcluster.KyvernoNamespace).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return func() []string {
		var made []string
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
				if trigger := updateRequestTrigger(ur); strings.HasPrefix(trigger, "Service/"+ns+"/") {
					policy, _, _ := unstructured.NestedString(ur.Object, "spec", "policy")
					made = append(made, policy+"/"+trigger)
				}
			default:
				return made
			}
		}
	}
}

// updateRequestTrigger is kind/namespace/name of an UpdateRequest's trigger (its first rule context's, else
// spec.resource).
func updateRequestTrigger(ur *unstructured.Unstructured) string {
	trigger, _, _ := unstructured.NestedMap(ur.Object, "spec", "resource")
	contexts, _, _ := unstructured.NestedSlice(ur.Object, "spec", "ruleContext")
	if len(contexts) > 0 {
		if m, ok := contexts[0].(map[string]any); ok {
			trigger, _, _ = unstructured.NestedMap(m, "trigger")
		}
	}
	return fmt.Sprintf("%v/%v/%v", trigger["kind"], trigger["namespace"], trigger["name"])
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
