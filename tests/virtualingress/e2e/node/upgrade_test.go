//go:build node

package node_test

import (
	"context"
	"maps"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// resolvedSource is a VirtualIngress resolved under the previous release, as it was before the upgrade.
type resolvedSource struct {
	ns              string
	uid             types.UID
	resourceVersion string
	ingresses       map[string]types.UID
}

// resolveBeforeUpgrade creates a Service and a VirtualIngress selecting it, waits until it is Ready, and notes the
// VirtualIngress's version and the UIDs of the Ingresses it generated.
func resolveBeforeUpgrade(t *testing.T) resolvedSource {
	t.Helper()
	ns := newNodeNamespace(t)
	labels := map[string]string{"tenant-service": "upgraded"}
	createLabelledService(t, ns, labels)
	vis := node.Dyn.Resource(virtualingress.GVR).Namespace(ns)
	ctx := context.Background()
	if _, err := vis.Create(ctx, virtualingress.New(ns, "coder", virtualingress.CoderSpec(labels)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, "VirtualIngress", func() (*unstructured.Unstructured, error) {
		return vis.Get(ctx, "coder", metav1.GetOptions{})
	}, "True", "IngressUpToDate", "")
	vi, err := vis.Get(ctx, "coder", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := resolvedSource{ns: ns, uid: vi.GetUID(), resourceVersion: vi.GetResourceVersion(), ingresses: ingressUIDs(t, ns)}
	if len(r.ingresses) == 0 {
		t.Fatalf("VirtualIngress %s/coder is Ready with no Ingress in its namespace", ns)
	}
	return r
}

// unchanged fails unless, after the upgrade, the VirtualIngress was never written and its Ingresses are the same
// objects (not recreated), a few seconds after the new release's controller and policies are ready.
func (r resolvedSource) unchanged(t *testing.T) {
	t.Helper()
	// Long enough for the new status controller's first reconcile of every source and Kyverno's background scan.
	time.Sleep(5 * time.Second)
	vi, err := node.Dyn.Resource(virtualingress.GVR).Namespace(r.ns).Get(context.Background(), "coder", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vi.GetUID() != r.uid || vi.GetResourceVersion() != r.resourceVersion {
		t.Errorf("the upgrade wrote VirtualIngress %s/coder: uid %s resourceVersion %s, was %s %s\nstatus now: %v",
			r.ns, vi.GetUID(), vi.GetResourceVersion(), r.uid, r.resourceVersion, vi.Object["status"])
	}
	if now := ingressUIDs(t, r.ns); !maps.Equal(now, r.ingresses) {
		t.Errorf("the upgrade changed the Ingresses of %s: %v, were %v", r.ns, now, r.ingresses)
	}
	t.Logf("upgraded from %s to %s: VirtualIngress %s/coder not written, Ingresses %v kept", nodetier.PreviousVersion,
		nodetier.CurrentVersion, r.ns, r.ingresses)
}

func ingressUIDs(t *testing.T, ns string) map[string]types.UID {
	t.Helper()
	list, err := node.Kube.NetworkingV1().Ingresses(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uids := map[string]types.UID{}
	for _, ing := range list.Items {
		uids[ing.Name] = ing.UID
	}
	return uids
}
