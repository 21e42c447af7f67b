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

// virtualHTTPRoutes is the latency measurements' subject for VirtualHTTPRoutes and their HTTPRoutes.
func (b *bench) virtualHTTPRoutes() subject {
	return subject{
		namespace: "bench-route",
		create: func(ctx context.Context, ns, name string, labels map[string]string) error {
			_, err := b.dyn.Resource(virtualingress.RouteGVR).Namespace(ns).Create(ctx, virtualingress.NewRoute(ns, name, virtualingress.CoderRouteSpec(labels)), metav1.CreateOptions{})
			return err
		},
		watch: func(ctx context.Context, ns string) (generatedWatch, error) {
			w, err := b.dyn.Resource(virtualingress.HTTPRouteGVR).Namespace(ns).Watch(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			return routeWatch{w}, nil
		},
	}
}

// routeWatch delivers every HTTPRoute event of one namespace.
type routeWatch struct{ w watch.Interface }

func (rw routeWatch) stop() { rw.w.Stop() }

func (rw routeWatch) waitFor(name, service string, timeout time.Duration) (time.Time, error) {
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-rw.w.ResultChan():
			if !ok {
				return time.Time{}, fmt.Errorf("watch closed while waiting for HTTPRoute %s", name)
			}
			route, isRoute := ev.Object.(*unstructured.Unstructured)
			if !isRoute || route.GetName() != name || ev.Type == watch.Deleted {
				continue
			}
			if firstBackendRef(route) == service {
				return time.Now(), nil
			}
		case <-deadline:
			return time.Time{}, fmt.Errorf("the HTTPRoute %s did not route to %s within %s", name, service, timeout)
		}
	}
}

func firstBackendRef(route *unstructured.Unstructured) string {
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	if len(rules) == 0 {
		return ""
	}
	refs, _, _ := unstructured.NestedSlice(rules[0].(map[string]any), "backendRefs")
	if len(refs) == 0 {
		return ""
	}
	name, _ := refs[0].(map[string]any)["name"].(string)
	return name
}
