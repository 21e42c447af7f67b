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

// resolvedSource is a namespace of VirtualIngresses resolved under the previous release, one of them serving
// through Traefik, as they were before the upgrade: their UIDs and resourceVersions, and their Ingresses' UIDs.
type resolvedSource struct {
	ns        string
	sources   map[string]string // "<uid> <resourceVersion>" by name
	ingresses map[string]types.UID
}

// upgradeFleet is how many VirtualIngresses an upgrade runs over, as a platform team's cluster holds.
const upgradeFleet = 1000

// upgradedBackend is the echo Pod, and the label value of its Service, behind the VirtualIngress upgrades run under.
const upgradedBackend = "upgraded"

// resolveBeforeUpgrade runs an echo Pod behind a Service and a VirtualIngress selecting it through Traefik, and
// upgradeFleet-1 more selecting the same Service, waits until they are Ready and the first serves, and notes the
// VirtualIngresses' versions and the UIDs of the Ingresses they generated.
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
	createVirtualIngresses(t, ns, selects(upgradedBackend), 1, upgradeFleet)
	took := waitAllReady(t, node.Dyn.Resource(virtualingress.GVR).Namespace(ns), upgradeFleet, 10*time.Minute)
	t.Logf("%d VirtualIngresses Ready %s after the last was created", upgradeFleet, took.Round(100*time.Millisecond))
	r := resolvedSource{ns: ns, sources: sourceVersions(t, ns), ingresses: ingressUIDs(t, ns)}
	if len(r.ingresses) < upgradeFleet {
		t.Fatalf("%d VirtualIngresses Ready in %s with %d Ingresses", upgradeFleet, ns, len(r.ingresses))
	}
	return r
}

// unchanged fails unless, after what (an upgrade), none of the VirtualIngresses was written and their Ingresses are
// the same objects (not recreated), some seconds after the new release's controller and policies are ready.
func (r resolvedSource) unchanged(t *testing.T, what string) {
	t.Helper()
	// Long enough for the new status controller's first reconcile of every source (a list, then 1,000 reconciles
	// that read the cache) and Kyverno's background scan.
	time.Sleep(15 * time.Second)
	now := sourceVersions(t, r.ns)
	written := 0
	for name, was := range r.sources {
		if now[name] != was {
			written++
			if written <= 3 {
				t.Errorf("%s wrote VirtualIngress %s/%s: uid and resourceVersion %q, were %q", what, r.ns, name, now[name], was)
			}
		}
	}
	if written > 0 {
		t.Errorf("%s wrote %d of %d VirtualIngresses", what, written, len(r.sources))
	}
	if now := ingressUIDs(t, r.ns); !maps.Equal(now, r.ingresses) {
		t.Errorf("%s changed the Ingresses of %s: %d now, %d before, or their UIDs", what, r.ns, len(now), len(r.ingresses))
	}
	t.Logf("%s: none of %d VirtualIngresses written, their %d Ingresses kept", what, len(r.sources), len(r.ingresses))
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

// sourceVersions is "<uid> <resourceVersion>" of every VirtualIngress of ns, by name.
func sourceVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	list, err := node.Dyn.Resource(virtualingress.GVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]string{}
	for _, vi := range list.Items {
		versions[vi.GetName()] = string(vi.GetUID()) + " " + vi.GetResourceVersion()
	}
	return versions
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
