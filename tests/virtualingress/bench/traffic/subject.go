package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualingress/traffic"
)

var ingressGVR = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}

// The kinds the recreation is measured through.
const (
	kindIngress   = "Ingress"
	kindHTTPRoute = "HTTPRoute"
)

var kinds = []string{kindIngress, kindHTTPRoute}

// subject is a VirtualIngress or VirtualHTTPRoute whose one host is served through the controller by the Service its
// labels select.
type subject struct {
	kind, namespace, host string
	labels                map[string]string
	generatedNames        func(ctx context.Context, service string) (bool, error)
}

// newSubject creates the first Service (in front of echo Pod "a") and the VirtualIngress or VirtualHTTPRoute, and
// waits until it is Ready.
func (b *bench) newSubject(ctx context.Context, namespace, kind string) (subject, tenantState, error) {
	s := subject{kind: kind, namespace: namespace, labels: map[string]string{"bench-kind": strings.ToLower(kind)},
		host: strings.ToLower(kind) + "." + namespace + ".traffic.test"}
	svc, err := b.kube.CoreV1().Services(namespace).Create(ctx, traffic.TenantService(s.labels, "a"), metav1.CreateOptions{})
	if err != nil {
		return s, tenantState{}, err
	}
	var obj *unstructured.Unstructured
	var gvr = virtualingress.GVR
	generated := ingressGVR
	if kind == kindIngress {
		obj = virtualingress.New(namespace, "bench", map[string]any{
			"ingressClassName": traffic.Class,
			"rules":            []any{virtualingress.Rule(s.host, virtualingress.Path("/", virtualingress.SelectorBackend(s.labels, 80)))},
		})
	} else {
		gvr, generated = virtualingress.RouteGVR, virtualingress.HTTPRouteGVR
		obj = virtualingress.NewRoute(namespace, "bench", map[string]any{
			"parentRefs": []any{traffic.ParentRef(traffic.ListenerHTTP)},
			"hostnames":  []any{s.host},
			"rules":      []any{map[string]any{"backendRefs": []any{virtualingress.SelectorBackendRef(s.labels, "http")}}},
		})
	}
	s.generatedNames = func(ctx context.Context, service string) (bool, error) {
		list, err := b.dyn.Resource(generated).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, item := range list.Items {
			if strings.HasPrefix(item.GetName(), "bench") && namesService(item.Object["spec"], service) {
				return true, nil
			}
		}
		return false, nil
	}
	if _, err := b.dyn.Resource(gvr).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return s, tenantState{}, err
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := b.dyn.Resource(gvr).Namespace(namespace).Get(ctx, "bench", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		status, _, _ := virtualingress.Condition(got, "Ready")
		return status == "True", nil
	})
	if err != nil {
		return s, tenantState{}, fmt.Errorf("%s %s/bench not Ready: %w", kind, namespace, err)
	}
	return s, tenantState{service: svc.Name, backend: "a"}, nil
}
