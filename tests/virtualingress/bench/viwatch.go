package main

import (
	"context"
	"fmt"
	"slices"
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
	seen := map[string]time.Time{}
	deadline := time.After(timeout)
	for len(seen) < len(names) {
		select {
		case ev, ok := <-vw.w.ResultChan():
			if !ok {
				return seen, fmt.Errorf("watch of VirtualIngresses closed with %d of %d %s", len(seen), len(names), what)
			}
			vi, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj || ev.Type == watch.Deleted || !slices.Contains(names, vi.GetName()) {
				continue
			}
			if _, already := seen[vi.GetName()]; !already && done(vi) {
				seen[vi.GetName()] = time.Now()
			}
		case <-deadline:
			return seen, fmt.Errorf("%d of %d VirtualIngresses %s within %s", len(seen), len(names), what, timeout)
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

// isUnresolved: the resolve policy has said the VirtualIngress matches no Service (Resolved=False).
func isUnresolved(vi *unstructured.Unstructured) bool {
	s, _, _ := virtualingress.Condition(vi, "Resolved")
	return s == "False"
}
