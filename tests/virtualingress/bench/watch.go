package main

import (
	"context"
	"fmt"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// ingressWatch delivers every Ingress event of one namespace; the time an event arrives is when the Ingress became
// observable, which is what the latencies measure.
type ingressWatch struct {
	w      watch.Interface
	events <-chan watch.Event
}

func (b *bench) watchIngresses(ctx context.Context, ns string) (*ingressWatch, error) {
	w, err := b.kube.NetworkingV1().Ingresses(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return &ingressWatch{w: w, events: w.ResultChan()}, nil
}

// waitFor returns when an event shows the named Ingress routing its first backend to service.
func (iw *ingressWatch) waitFor(name, service string, timeout time.Duration) (time.Time, error) {
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-iw.events:
			if !ok {
				return time.Time{}, fmt.Errorf("watch closed while waiting for Ingress %s", name)
			}
			ing, isIngress := ev.Object.(*networkingv1.Ingress)
			if !isIngress || ing.Name != name || ev.Type == watch.Deleted {
				continue
			}
			if firstService(ing) == service {
				return time.Now(), nil
			}
		case <-deadline:
			return time.Time{}, fmt.Errorf("the Ingress %s did not route to %s within %s", name, service, timeout)
		}
	}
}

// followAll waits until each Ingress of want (name -> Service) routes its first backend to its Service, or timeout,
// and returns when each was seen doing so.
func (iw *ingressWatch) followAll(want map[string]string, timeout time.Duration) map[string]time.Time {
	seen := map[string]time.Time{}
	deadline := time.After(timeout)
	for len(seen) < len(want) {
		select {
		case ev, ok := <-iw.events:
			if !ok {
				return seen
			}
			ing, isIngress := ev.Object.(*networkingv1.Ingress)
			if !isIngress || ev.Type == watch.Deleted {
				continue
			}
			if service, wanted := want[ing.Name]; wanted && firstService(ing) == service {
				if _, done := seen[ing.Name]; !done {
					seen[ing.Name] = time.Now()
				}
			}
		case <-deadline:
			return seen
		}
	}
	return seen
}

func (iw *ingressWatch) stop() { iw.w.Stop() }

func firstService(ing *networkingv1.Ingress) string {
	for _, r := range ing.Spec.Rules {
		if r.HTTP != nil && len(r.HTTP.Paths) > 0 && r.HTTP.Paths[0].Backend.Service != nil {
			return r.HTTP.Paths[0].Backend.Service.Name
		}
	}
	return ""
}
