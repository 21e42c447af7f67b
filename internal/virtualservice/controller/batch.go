package controller

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// DefaultBatchWindow is how long a watch event's reconcile waits by default. Long enough for what a deploy does to
// one Service name within a second or so (a developer's Service, its EndpointSlice, the copies of other developers)
// to arrive, short enough that nobody waits for a route.
const DefaultBatchWindow = time.Second

// enqueueAfter is handler.EnqueueRequestsFromMapFunc with a delay: the production Service an event concerns is
// reconciled window after the event, so that the events arriving meanwhile coalesce into one reconcile and one write
// instead of a write each. The work queue holds a key once and keeps the earliest of its delays, so the window starts
// at the first event: a steady stream of events cannot hold a write back for longer than window.
// handler.Funcs keeps controller-runtime's low priority for the initial list and resyncs.
func enqueueAfter(window time.Duration, toRequests handler.MapFunc) handler.EventHandler {
	add := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		added := map[reconcile.Request]bool{}
		for _, o := range objs {
			for _, req := range toRequests(ctx, o) {
				if !added[req] {
					added[req] = true
					q.AddAfter(req, window)
				}
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
		// An EndpointSlice relabelled to another Service concerns both.
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(ctx, q, e.Object)
		},
	}
}
