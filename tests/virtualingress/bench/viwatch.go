package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// virtualIngressWatch delivers every VirtualIngress event of one namespace; the time an event arrives is when the
// status it carries became observable, which is what the GitOps rows measure (Ready is the status controller's word
// that the Ingress holds what the VirtualIngress resolved to).
type virtualIngressWatch struct {
	w watch.Interface
}

func (b *bench) watchVirtualIngresses(ctx context.Context, ns string) (*virtualIngressWatch, error) {
	w, err := b.dyn.Resource(virtualingress.GVR).Namespace(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return &virtualIngressWatch{w: w}, nil
}

// waitAll returns when an event has shown done true of each VirtualIngress of names, and when the first such event
// of each arrived; on an error, what it saw before. what says in the error what done waits for.
func (vw *virtualIngressWatch) waitAll(names []string, what string, done func(*unstructured.Unstructured) bool, timeout time.Duration) (map[string]time.Time, error) {
	seen, err := vw.waitAllOf(names, map[string]func(*unstructured.Unstructured) bool{what: done}, timeout)
	return seen[what], err
}

// waitAllOf is waitAll for several conditions at once, each timed on its own (keyed by what it waits for): it returns
// when every condition has been seen true of every VirtualIngress of names.
func (vw *virtualIngressWatch) waitAllOf(names []string, conds map[string]func(*unstructured.Unstructured) bool, timeout time.Duration) (map[string]map[string]time.Time, error) {
	seen := map[string]map[string]time.Time{}
	for what := range conds {
		seen[what] = map[string]time.Time{}
	}
	missing := func() string {
		var out []string
		for _, what := range slices.Sorted(maps.Keys(conds)) {
			if len(seen[what]) < len(names) {
				out = append(out, fmt.Sprintf("%d of %d VirtualIngresses %s", len(seen[what]), len(names), what))
			}
		}
		return strings.Join(out, ", ")
	}
	deadline := time.After(timeout)
	for missing() != "" {
		select {
		case ev, ok := <-vw.w.ResultChan():
			if !ok {
				return seen, fmt.Errorf("watch of VirtualIngresses closed with %s", missing())
			}
			vi, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj || ev.Type == watch.Deleted || !slices.Contains(names, vi.GetName()) {
				continue
			}
			at := time.Now()
			for what, done := range conds {
				if _, already := seen[what][vi.GetName()]; !already && done(vi) {
					seen[what][vi.GetName()] = at
				}
			}
		case <-deadline:
			return seen, fmt.Errorf("%s within %s", missing(), timeout)
		}
	}
	return seen, nil
}

// waitFor is waitAll for one VirtualIngress.
func (vw *virtualIngressWatch) waitFor(name, what string, done func(*unstructured.Unstructured) bool, timeout time.Duration) (time.Time, error) {
	seen, err := vw.waitAll([]string{name}, what, done, timeout)
	return seen[name], err
}

func (vw *virtualIngressWatch) stop() { vw.w.Stop() }

// isReady: the status controller says Ready=True.
func isReady(vi *unstructured.Unstructured) bool {
	s, _, _ := virtualingress.Condition(vi, "Ready")
	return s == "True"
}

// readyOn: Ready=True with a backend resolved to service. Ready alone could be about an earlier Service; Ready is
// True only with every backend resolved and the Ingress holding them, so with the backend naming service the Ingress
// routes to it.
func readyOn(service string) func(*unstructured.Unstructured) bool {
	return func(vi *unstructured.Unstructured) bool {
		if !isReady(vi) {
			return false
		}
		for _, b := range virtualingress.Backends(vi) {
			if b.Service == service {
				return true
			}
		}
		return false
	}
}

// isResolved: the resolve policy has resolved every backend to a Service (Resolved=True).
func isResolved(vi *unstructured.Unstructured) bool {
	s, _, _ := virtualingress.Condition(vi, "Resolved")
	return s == "True"
}

// isUnresolved: the resolve policy has said the VirtualIngress matches no Service (Resolved=False).
func isUnresolved(vi *unstructured.Unstructured) bool {
	s, _, _ := virtualingress.Condition(vi, "Resolved")
	return s == "False"
}
