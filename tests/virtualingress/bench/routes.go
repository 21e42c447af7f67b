package main

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// routeCreateLatency is createLatency for VirtualHTTPRoutes: created one at a time over a set of Services, each timed
// from the create call returning to its HTTPRoute naming the Service on a watch.
func (b *bench) routeCreateLatency(ctx context.Context, n int) (samples []time.Duration, err error) {
	ns, err := b.namespace(ctx, "bench-route-create")
	if err != nil {
		return samples, err
	}
	const services = 20
	for i := range services {
		if _, err := b.createService(ctx, ns, fmt.Sprintf("svc-%d", i), labelsFor(i)); err != nil {
			return samples, err
		}
	}
	rw, err := b.watchRoutes(ctx, ns)
	if err != nil {
		return samples, err
	}
	defer rw.Stop()
	for i := range n {
		name := fmt.Sprintf("vhr-%d", i)
		vhr := virtualingress.NewRoute(ns, name, virtualingress.CoderRouteSpec(labelsFor(i%services)))
		if _, err := b.dyn.Resource(virtualingress.RouteGVR).Namespace(ns).Create(ctx, vhr, metav1.CreateOptions{}); err != nil {
			return samples, err
		}
		start := time.Now()
		seen, err := waitRoute(rw, name+"-generated", fmt.Sprintf("svc-%d", i%services), b.timeout)
		if err != nil {
			return samples, err
		}
		samples = append(samples, seen.Sub(start))
	}
	return samples, nil
}

// routeRecreateLatency is recreateLatency for a VirtualHTTPRoute.
func (b *bench) routeRecreateLatency(ctx context.Context, n int) (samples []time.Duration, err error) {
	ns, err := b.namespace(ctx, "bench-route-recreate")
	if err != nil {
		return samples, err
	}
	labels := labelsFor(0)
	current := "svc-initial"
	if _, err := b.createService(ctx, ns, current, labels); err != nil {
		return samples, err
	}
	rw, err := b.watchRoutes(ctx, ns)
	if err != nil {
		return samples, err
	}
	defer rw.Stop()
	vhr := virtualingress.NewRoute(ns, "coder", virtualingress.CoderRouteSpec(labels))
	if _, err := b.dyn.Resource(virtualingress.RouteGVR).Namespace(ns).Create(ctx, vhr, metav1.CreateOptions{}); err != nil {
		return samples, err
	}
	if _, err := waitRoute(rw, "coder-generated", current, b.timeout); err != nil {
		return samples, err
	}
	for i := range n {
		if err := b.kube.CoreV1().Services(ns).Delete(ctx, current, metav1.DeleteOptions{}); err != nil {
			return samples, err
		}
		current = fmt.Sprintf("svc-%d", i)
		if _, err := b.createService(ctx, ns, current, labels); err != nil {
			return samples, err
		}
		start := time.Now()
		seen, err := waitRoute(rw, "coder-generated", current, b.timeout)
		if err != nil {
			return samples, err
		}
		samples = append(samples, seen.Sub(start))
	}
	return samples, nil
}

func (b *bench) watchRoutes(ctx context.Context, ns string) (watch.Interface, error) {
	return b.dyn.Resource(virtualingress.HTTPRouteGVR).Namespace(ns).Watch(ctx, metav1.ListOptions{})
}

// waitRoute returns when an event shows the named HTTPRoute's first backendRef naming service.
func waitRoute(w watch.Interface, name, service string, timeout time.Duration) (time.Time, error) {
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return time.Time{}, fmt.Errorf("watch closed while waiting for HTTPRoute %s", name)
			}
			route, isRoute := ev.Object.(*unstructured.Unstructured)
			if !isRoute || route.GetName() != name || ev.Type == watch.Deleted {
				continue
			}
			rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
			if len(rules) == 0 {
				continue
			}
			refs, _, _ := unstructured.NestedSlice(rules[0].(map[string]any), "backendRefs")
			if len(refs) > 0 && refs[0].(map[string]any)["name"] == service {
				return time.Now(), nil
			}
		case <-deadline:
			return time.Time{}, fmt.Errorf("the HTTPRoute %s did not route to %s within %s", name, service, timeout)
		}
	}
}
