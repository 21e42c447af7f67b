//go:build node

package node_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// What users see when a Pod goes in the middle of their work: the status controller's, and Kyverno's admission
// and background controllers' (Kyverno installed from its chart, so each is a Deployment's Pod the kubelet replaces).

const (
	kyvernoAdmissionPods  = "app.kubernetes.io/component=admission-controller"
	kyvernoBackgroundPods = "app.kubernetes.io/component=background-controller"
	// faultBurst is how many objects each fault's burst writes, half of them before the Pod is deleted.
	faultBurst = 200
	// writers is how many writes a burst has in flight at once, as a GitOps tool syncing many objects does.
	writers = 8
)

// inParallel runs do(i) for i in [from, to) on writers goroutines and returns the errors by i.
func inParallel(from, to int, do func(i int) error) map[int]error {
	var mu sync.Mutex
	errs := map[int]error{}
	next := atomic.Int64{}
	next.Store(int64(from))
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < to; i = int(next.Add(1) - 1) {
				if err := do(i); err != nil {
					mu.Lock()
					errs[i] = err
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return errs
}

// hostedVirtualIngress is the i-th VirtualIngress of a burst: its own host, the Service labels selects.
func hostedVirtualIngress(ns string, i int, labels map[string]string) *unstructured.Unstructured {
	return virtualingress.New(ns, pairName(i), map[string]any{
		"rules": []any{virtualingress.Rule(fmt.Sprintf("h%04d.example.test", i), virtualingress.Path("/", virtualingress.SelectorBackend(labels, 80)))},
	})
}

// createVirtualIngresses creates VirtualIngresses from to to in ns, selecting labels, failing on any refusal.
func createVirtualIngresses(t *testing.T, ns string, labels map[string]string, from, to int) {
	t.Helper()
	vis := node.Dyn.Resource(virtualingress.GVR).Namespace(ns)
	errs := inParallel(from, to, func(i int) error {
		_, err := vis.Create(context.Background(), hostedVirtualIngress(ns, i, labels), metav1.CreateOptions{})
		return err
	})
	for i, err := range errs {
		t.Fatalf("creating VirtualIngress %d of %s: %v", i, ns, err)
	}
}

// deletePod deletes the first Pod of namespace matching selector and returns its name once it is gone, not only
// terminating: what follows can then only be its replacement's work.
func deletePod(t *testing.T, namespace, selector string) string {
	t.Helper()
	ctx := context.Background()
	pods, err := node.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("Pods %s in %s: %v, %v", selector, namespace, pods, err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	old := pods.Items[0].Name
	if err := node.Kube.CoreV1().Pods(namespace).Delete(ctx, old, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 2*time.Minute, "Pod "+namespace+"/"+old+" gone", func() (bool, string, error) {
		_, err := node.Kube.CoreV1().Pods(namespace).Get(ctx, old, metav1.GetOptions{})
		return apierrors.IsNotFound(err), "", nil
	})
	return old
}

// waitReplaced waits until as many Pods of selector as want are Ready, none of them old, and returns when.
func waitReplaced(t *testing.T, namespace, selector, old string, want int) time.Time {
	t.Helper()
	poll.Until(t, 3*time.Minute, fmt.Sprintf("%d Ready Pods %s in %s, none %s", want, selector, namespace, old), func() (bool, string, error) {
		pods, err := node.Kube.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, "", err
		}
		ready := 0
		for _, p := range pods.Items {
			if p.Name == old {
				return false, "the old Pod is still listed", nil
			}
			for _, c := range p.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" && p.DeletionTimestamp == nil {
					ready++
				}
			}
		}
		return ready == want, fmt.Sprintf("%d of %d Ready", ready, len(pods.Items)), nil
	})
	return time.Now()
}

// burstAroundDeletion creates faultBurst VirtualIngresses selecting one Service in a new namespace, and deletes the
// first Pod of selector in podNamespace (waiting until it is gone) once half of them exist. It returns the namespace,
// the deleted Pod's name and when the deletion began.
func burstAroundDeletion(t *testing.T, podNamespace, selector string) (ns, old string, begin time.Time) {
	t.Helper()
	ns = newNodeNamespace(t)
	labels := map[string]string{"tenant-service": "many"}
	createLabelledService(t, ns, labels)
	createVirtualIngresses(t, ns, labels, 0, faultBurst/2)
	begin = time.Now()
	old = deletePod(t, podNamespace, selector)
	createVirtualIngresses(t, ns, labels, faultBurst/2, faultBurst)
	return ns, old, begin
}

// testPodDeletedMidway: the controller Pod is deleted after half of a burst of VirtualIngresses was created; the
// ReplicaSet's new Pod sets every one of them Ready.
func testPodDeletedMidway(t *testing.T) {
	ns, _, begin := burstAroundDeletion(t, chart, controllerPods)
	waitAllReady(t, node.Dyn.Resource(virtualingress.GVR).Namespace(ns), faultBurst, 5*time.Minute)
	t.Logf("all %d Ready %s after the controller Pod was deleted", faultBurst, time.Since(begin).Round(100*time.Millisecond))
}

// testBackgroundPodDeleted: Kyverno's background controller Pod, which generates every Ingress, is deleted after
// half of a burst was created and the rest is created while it is gone: nothing is lost, every VirtualIngress is
// Ready, and the time its replacement took to follow is logged.
func testBackgroundPodDeleted(t *testing.T) {
	ns, old, begin := burstAroundDeletion(t, devcluster.KyvernoNamespace, kyvernoBackgroundPods)
	back := waitReplaced(t, devcluster.KyvernoNamespace, kyvernoBackgroundPods, old, int(kyvernoDeployments["kyverno-background-controller"]))
	waitAllReady(t, node.Dyn.Resource(virtualingress.GVR).Namespace(ns), faultBurst, 5*time.Minute)
	t.Logf("background controller Pod deleted: its replacement Ready %s after the deletion; all %d VirtualIngresses Ready %s after that",
		back.Sub(begin).Round(100*time.Millisecond), faultBurst, time.Since(back).Round(100*time.Millisecond))
}

// testAdmissionPodDeleted: one of Kyverno's two admission Pods is deleted while a GitOps sync applies faultBurst
// Services and the VirtualIngresses that select them. Every write is either carried out or refused with an error
// that says what refused it, a refused write leaves nothing behind, the sync's retry carries the refused ones out,
// and every VirtualIngress is then Ready.
func testAdmissionPodDeleted(t *testing.T) {
	ctx := context.Background()
	ns := newNodeNamespace(t)
	var applied atomic.Int64
	begin := time.Now()
	synced := make(chan map[int]error, 1)
	go func() {
		synced <- inParallel(0, faultBurst, func(i int) error {
			defer applied.Add(1)
			return applyPair(ctx, ns, i)
		})
	}()
	poll.Until(t, 2*time.Minute, "a quarter of the sync applied", func() (bool, string, error) {
		return applied.Load() >= faultBurst/4, fmt.Sprint(applied.Load()), nil
	})
	old := deletePod(t, devcluster.KyvernoNamespace, kyvernoAdmissionPods)
	refused := <-synced
	checkRefusals(t, ns, refused)
	t.Logf("admission Pod %s deleted during a sync of %d pairs: %d applied, %d refused", old, faultBurst, faultBurst-len(refused), len(refused))
	// The sync's retry, as Argo CD and Flux retry a failed sync.
	for i := range refused {
		if err := applyPair(ctx, ns, i); err != nil {
			t.Fatalf("retrying pair %d: %v", i, err)
		}
	}
	took := waitAllReady(t, node.Dyn.Resource(virtualingress.GVR).Namespace(ns), faultBurst, 5*time.Minute)
	waitReplaced(t, devcluster.KyvernoNamespace, kyvernoAdmissionPods, old, int(kyvernoDeployments["kyverno-admission-controller"]))
	t.Logf("all %d VirtualIngresses Ready %s after the sync began (%s after it ended)", faultBurst,
		time.Since(begin).Round(100*time.Millisecond), took.Round(100*time.Millisecond))
}

// checkRefusals fails unless each of a sync's refused pairs (by index) was refused with an error that says what
// refused it, and left no VirtualIngress behind; it logs the errors.
func checkRefusals(t *testing.T, ns string, refused map[int]error) {
	t.Helper()
	for i, err := range refused {
		t.Logf("pair %d refused: %v", i, err)
		if !strings.Contains(err.Error(), "webhook") {
			t.Errorf("pair %d refused with an error that does not say what refused it: %v", i, err)
		}
		if _, err := node.Dyn.Resource(virtualingress.GVR).Namespace(ns).Get(context.Background(), pairName(i), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("pair %d: its apply was refused, yet its VirtualIngress exists (%v)", i, err)
		}
	}
}

func pairName(i int) string { return fmt.Sprintf("vi-%04d", i) }

// applyPair applies the i-th pair of a sync: a Service labelled pair=<i>, then the VirtualIngress selecting it.
func applyPair(ctx context.Context, ns string, i int) error {
	labels := map[string]string{"pair": fmt.Sprint(i)}
	if err := virtualingress.Apply(ctx, node.Dyn, virtualingress.ServiceGVR, virtualingress.TenantService(ns, fmt.Sprintf("svc-%04d", i), labels)); err != nil {
		return fmt.Errorf("Service: %w", err)
	}
	if err := virtualingress.Apply(ctx, node.Dyn, virtualingress.GVR, hostedVirtualIngress(ns, i, labels)); err != nil {
		return fmt.Errorf("VirtualIngress: %w", err)
	}
	return nil
}

// waitAllReady waits until every one of total VirtualIngresses in vis is Ready=True and returns how long that took.
func waitAllReady(t *testing.T, vis dynamic.ResourceInterface, total int, timeout time.Duration) time.Duration {
	t.Helper()
	begin := time.Now()
	poll.Until(t, timeout, fmt.Sprintf("all %d VirtualIngresses Ready=True", total), func() (bool, string, error) {
		list, err := vis.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		ready, first := 0, ""
		for i := range list.Items {
			vi := &list.Items[i]
			if s, _, _ := virtualingress.Condition(vi, "Ready"); s == "True" {
				ready++
			} else if first == "" {
				// The first one waiting, as its status tells it (no Resolved condition: admission never resolved it).
				rs, rr, _ := virtualingress.Condition(vi, "Resolved")
				s, reason, msg := virtualingress.Condition(vi, "Ready")
				first = fmt.Sprintf("; %s: Resolved=%q %s, Ready=%q %s: %s", vi.GetName(), rs, rr, s, reason, msg)
			}
		}
		return ready == total && len(list.Items) == total, fmt.Sprintf("%d of %d Ready%s", ready, len(list.Items), first), nil
	})
	return time.Since(begin)
}
