package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/virtual-ingress/virtual-ingress/tests/virtualservice/fixture"
)

// routeState is what a converged VirtualService looks like in a phase: its number of routes (developer routes plus
// the default one) and the header of its first developer route.
type routeState struct {
	routes int
	header string
}

// watcher follows the VirtualServices on a watch, independently of the operator: every ADDED or MODIFIED event is
// one write the API server accepted.
type watcher struct {
	expected int

	mu     sync.Mutex
	writes int
	// decreases counts writes that left a VirtualService with fewer routes than its previous version: a developer
	// route that flapped away (requests meant for a developer namespace go to production meanwhile).
	decreases int
	routes    map[string]int
	want      routeState
	converged map[string]bool
	doneAt    time.Time
	done      chan struct{}
}

func startWatch(ctx context.Context, cfg *rest.Config, expected int) (*watcher, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	w := &watcher{expected: expected, converged: map[string]bool{}, routes: map[string]int{}}
	inf := dynamicinformer.NewFilteredDynamicInformer(dyn, fixture.VirtualServices, prodNS, 0, cache.Indexers{}, nil)
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { w.observe(o.(*unstructured.Unstructured), true) },
		UpdateFunc: func(old, o any) {
			// A relist after a dropped watch replays objects unchanged; only a new resourceVersion is a write.
			w.observe(o.(*unstructured.Unstructured), old.(*unstructured.Unstructured).GetResourceVersion() != o.(*unstructured.Unstructured).GetResourceVersion())
		},
	}); err != nil {
		return nil, err
	}
	go inf.Informer().Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		return nil, fmt.Errorf("VirtualService watch did not sync")
	}
	return w, nil
}

func (w *watcher) observe(vs *unstructured.Unstructured, write bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	http, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
	if write {
		w.writes++
		if prev, seen := w.routes[vs.GetName()]; seen && len(http) < prev {
			w.decreases++
		}
	}
	w.routes[vs.GetName()] = len(http)
	if w.done == nil {
		return
	}
	ok := matches(vs, w.want)
	w.converged[vs.GetName()] = ok
	if ok && w.doneAt.IsZero() && countTrue(w.converged) == w.expected {
		w.doneAt = time.Now()
		close(w.done)
	}
}

// expect starts a phase: converged is recomputed from the next events on, and done closes when every
// VirtualService matches want.
func (w *watcher) expect(want routeState) (done <-chan struct{}, writesBefore int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.want, w.doneAt, w.done = want, time.Time{}, make(chan struct{})
	w.converged = map[string]bool{}
	return w.done, w.writes
}

func (w *watcher) result() (time.Time, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.doneAt, w.writes
}

// counts returns the writes and route-count decreases seen so far.
func (w *watcher) counts() (writes, decreases int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes, w.decreases
}

// forget drops what the watcher knows of deleted VirtualServices, so that their re-creation is not a decrease.
func (w *watcher) forget() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.routes = map[string]int{}
}

func (w *watcher) progress() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return countTrue(w.converged)
}

func matches(vs *unstructured.Unstructured, want routeState) bool {
	http, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
	if len(http) != want.routes {
		return false
	}
	if want.routes == 1 {
		return true
	}
	first, _ := http[0].(map[string]any)
	match, _ := first["match"].([]any)
	if len(match) == 0 {
		return false
	}
	headers, _ := match[0].(map[string]any)["headers"].(map[string]any)
	_, ok := headers[want.header]
	return ok
}

func countTrue(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}
