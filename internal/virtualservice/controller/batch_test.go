package controller

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/config"
)

// developerEvents are what a deploy of the copies of prod/web in two developer namespaces looks like on the watches:
// each Service, its EndpointSlice, then the slice turning ready.
func developerEvents() []func(context.Context, handler.EventHandler, priorityqueue.PriorityQueue[reconcile.Request]) {
	var out []func(context.Context, handler.EventHandler, priorityqueue.PriorityQueue[reconcile.Request])
	for _, ns := range []string{"dev-a", "dev-b"} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", ResourceVersion: "1"}}
		slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1", ResourceVersion: "2",
			Labels: map[string]string{discoveryv1.LabelServiceName: "web"}}}
		ready := slice.DeepCopy()
		ready.ResourceVersion = "3"
		out = append(out,
			func(ctx context.Context, h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
				h.Create(ctx, event.CreateEvent{Object: svc}, q)
			},
			func(ctx context.Context, h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
				h.Create(ctx, event.CreateEvent{Object: slice}, q)
			},
			func(ctx context.Context, h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
				h.Update(ctx, event.UpdateEvent{ObjectOld: slice, ObjectNew: ready}, q)
			})
	}
	return out
}

// batchingNamespaces is the operator's event wiring for the configuration prod + dev-a, dev-b.
func batchingNamespaces(t *testing.T, window time.Duration) *namespaces {
	t.Helper()
	cfg, err := config.Parse([]byte("defaultNamespace: prod\ndeveloperNamespaces: [dev-a, dev-b]\n"))
	if err != nil {
		t.Fatal(err)
	}
	store := NewStore()
	store.Set(cfg)
	return &namespaces{store: store, batchWindow: window}
}

// The controller's own queue (controller-runtime's priority queue) on synctest's fake clock: the test controls time,
// so nothing depends on how fast it runs.
func TestEventsWithinTheWindowAreOneReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := batchingNamespaces(t, time.Second)
		q := priorityqueue.New[reconcile.Request]("batch-test")
		defer q.ShutDown()
		h := enqueueAfter(n.batchWindow, n.mapToService)

		events := developerEvents()
		step := 100 * time.Millisecond // all six within the window: the last one 500 ms after the first
		for _, e := range events {
			e(t.Context(), h, q)
			time.Sleep(step)
		}
		synctest.Wait()
		if l := q.Len(); l != 0 {
			t.Fatalf("%d reconciles ready before the window ended, want none yet", l)
		}

		time.Sleep(time.Second - time.Duration(len(events))*step)
		synctest.Wait()
		if l := q.Len(); l != 1 {
			t.Fatalf("%d reconciles ready when the window ended, want 1 for the %d events", l, len(events))
		}
		req, _ := q.Get()
		if want := (reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "prod", Name: "web"}}); req != want {
			t.Errorf("reconcile of %v, want %v", req, want)
		}
		q.Done(req)

		time.Sleep(time.Minute)
		synctest.Wait()
		if l := q.Len(); l != 0 {
			t.Errorf("%d more reconciles after the window, want none", l)
		}
	})
}

// The window counts from the first event: events that keep coming do not push the reconcile back.
func TestEventsKeepComingTheReconcileStillRunsAfterOneWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := batchingNamespaces(t, time.Second)
		q := priorityqueue.New[reconcile.Request]("batch-test-stream")
		defer q.ShutDown()
		h := enqueueAfter(n.batchWindow, n.mapToService)

		events := developerEvents()
		for i := range 12 { // one event every 100 ms for 1.2 s
			events[i%len(events)](t.Context(), h, q)
			if i < 10 {
				synctest.Wait()
				if l := q.Len(); l != 0 {
					t.Fatalf("reconcile ready %s after the first event, want it after 1s", time.Duration(i)*100*time.Millisecond)
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		synctest.Wait()
		if l := q.Len(); l != 1 {
			t.Fatalf("%d reconciles ready 1.2 s after the first event, want 1", l)
		}
	})
}

func TestNoWindowReconcilesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := batchingNamespaces(t, 0)
		q := priorityqueue.New[reconcile.Request]("batch-test-off")
		defer q.ShutDown()
		developerEvents()[0](t.Context(), enqueueAfter(n.batchWindow, n.mapToService), q)
		if l := q.Len(); l != 1 {
			t.Fatalf("%d reconciles ready right after the event, want 1", l)
		}
	})
}

func TestBatchWindowOption(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{
		{0, DefaultBatchWindow},
		{-1, 0},
		{3 * time.Second, 3 * time.Second},
	} {
		o := Options{ConfigMap: client.ObjectKey{Namespace: "ns", Name: "cm"}, BatchWindow: tc.in}
		if err := o.defaults(); err != nil {
			t.Fatal(err)
		}
		if o.BatchWindow != tc.want {
			t.Errorf("BatchWindow %s -> %s, want %s", tc.in, o.BatchWindow, tc.want)
		}
	}
}
