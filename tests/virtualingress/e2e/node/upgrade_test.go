//go:build node

package node_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualingress/traffic"
)

// resolvedSource is a VirtualIngress resolved under the previous release, as it was before the upgrade.
type resolvedSource struct {
	ns              string
	uid             types.UID
	resourceVersion string
	ingresses       map[string]types.UID
}

// upgradedBackend is the echo Pod, and the label value of its Service, behind the VirtualIngress upgrades run under.
const upgradedBackend = "upgraded"

// resolveBeforeUpgrade runs an echo Pod behind a Service and a VirtualIngress selecting it through Traefik, waits
// until it is Ready and serves, and notes the VirtualIngress's version and the UIDs of the Ingresses it generated.
func resolveBeforeUpgrade(t *testing.T) resolvedSource {
	t.Helper()
	ns := newNodeNamespace(t)
	ctx := context.Background()
	if err := traffic.RunBackend(ctx, node.Kube, ns, upgradedBackend); err != nil {
		t.Fatalf("%v\n%s", err, node.PodReport(ns))
	}
	if _, err := node.Kube.CoreV1().Services(ns).Create(ctx, traffic.TenantService(selects(upgradedBackend), upgradedBackend), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createVirtualIngress(t, ns, "coder", map[string]any{
		"ingressClassName": traffic.Class,
		"rules": []any{virtualingress.Rule(host(upgradedBackend),
			virtualingress.Path("/", virtualingress.SelectorBackend(selects(upgradedBackend), 80)))},
	})
	expect(t, traffic.NewClient(trafficController.HTTP), host(upgradedBackend), "/", upgradedBackend)
	vi, err := node.Dyn.Resource(virtualingress.GVR).Namespace(ns).Get(ctx, "coder", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := resolvedSource{ns: ns, uid: vi.GetUID(), resourceVersion: vi.GetResourceVersion(), ingresses: ingressUIDs(t, ns)}
	if len(r.ingresses) == 0 {
		t.Fatalf("VirtualIngress %s/coder is Ready with no Ingress in its namespace", ns)
	}
	return r
}

// unchanged fails unless, after what (an upgrade), the VirtualIngress was never written and its Ingresses are the
// same objects (not recreated), a few seconds after the new release's controller and policies are ready.
func (r resolvedSource) unchanged(t *testing.T, what string) {
	t.Helper()
	// Long enough for the new status controller's first reconcile of every source and Kyverno's background scan.
	time.Sleep(5 * time.Second)
	vi, err := node.Dyn.Resource(virtualingress.GVR).Namespace(r.ns).Get(context.Background(), "coder", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vi.GetUID() != r.uid || vi.GetResourceVersion() != r.resourceVersion {
		t.Errorf("%s wrote VirtualIngress %s/coder: uid %s resourceVersion %s, was %s %s\nstatus now: %v",
			what, r.ns, vi.GetUID(), vi.GetResourceVersion(), r.uid, r.resourceVersion, vi.Object["status"])
	}
	if now := ingressUIDs(t, r.ns); !maps.Equal(now, r.ingresses) {
		t.Errorf("%s changed the Ingresses of %s: %v, were %v", what, r.ns, now, r.ingresses)
	}
	t.Logf("%s: VirtualIngress %s/coder not written, Ingresses %v kept", what, r.ns, r.ingresses)
}

// requests sends a GET for the VirtualIngress's host through Traefik every 20 ms (50 a second, as the traffic bench
// does) until stopped, counting those the echo Pod did not answer.
type requests struct {
	stop         chan struct{}
	done         chan struct{}
	sent, failed int
	firstFailure string
}

func (r resolvedSource) sendRequests() *requests {
	q := &requests{stop: make(chan struct{}), done: make(chan struct{})}
	client := traffic.NewClient(trafficController.HTTP)
	go func() {
		defer close(q.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-q.stop:
				return
			case <-tick.C:
			}
			got, err := client.Get(context.Background(), host(upgradedBackend), "/")
			q.sent++
			if err != nil || got.Backend != upgradedBackend {
				q.failed++
				if q.firstFailure == "" {
					q.firstFailure = fmt.Sprintf("%d %q %v", got.Status, got.Body, err)
				}
			}
		}
	}()
	return q
}

// check stops the requests and fails the test if any of them failed during what.
func (q *requests) check(t *testing.T, what string) {
	t.Helper()
	close(q.stop)
	<-q.done
	if q.failed > 0 {
		t.Errorf("%s: %d of %d requests through Traefik failed (first: %s)", what, q.failed, q.sent, q.firstFailure)
		return
	}
	t.Logf("%s: %d requests through Traefik, none failed", what, q.sent)
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
