//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// testRestartWritesNothing: every start of Kyverno's background controller hands the service-events policies every
// existing Service as if it had been updated. Nothing happened to them: no VirtualIngress may be written because of
// it, and a Service recreated right after the restart is still followed.
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

	startBackground := stopBackgroundController(t)
	startBackground()
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
