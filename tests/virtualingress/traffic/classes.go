package traffic

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

var (
	// GatewayGVR and GatewayClassGVR are Gateway API's (standard channel, v1).
	GatewayGVR      = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	GatewayClassGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}
)

// createClasses creates the IngressClass Traefik serves and, with gateway, its GatewayClass and the Gateway whose
// listener ports are the entry points' (Traefik attaches a listener to the entry point of its port).
func createClasses(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, withGateway bool, httpPort, httpsPort int) error {
	if _, err := kube.NetworkingV1().IngressClasses().Create(ctx, IngressClass(Class), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if !withGateway {
		return nil
	}
	gatewayClass := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": Class},
		"spec":     map[string]any{"controllerName": GatewayController},
	}}
	if _, err := dyn.Resource(GatewayClassGVR).Create(ctx, gatewayClass, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	fromAll := map[string]any{"namespaces": map[string]any{"from": "All"}}
	gateway := NewGateway(Namespace, Gateway, []any{
		map[string]any{"name": ListenerHTTP, "port": int64(httpPort), "protocol": "HTTP", "allowedRoutes": fromAll},
		map[string]any{"name": ListenerHTTPS, "port": int64(httpsPort), "protocol": "HTTPS", "hostname": GatewayHostnames,
			"allowedRoutes": fromAll,
			"tls":           map[string]any{"mode": "Terminate", "certificateRefs": []any{map[string]any{"kind": "Secret", "name": gatewaySecret}}}},
	})
	// The Gateway is recreated, not kept: its ports are this run's entry points'.
	_ = dyn.Resource(GatewayGVR).Namespace(Namespace).Delete(ctx, Gateway, metav1.DeleteOptions{})
	_, err := dyn.Resource(GatewayGVR).Namespace(Namespace).Create(ctx, gateway, metav1.CreateOptions{})
	return err
}

// IngressClass is an IngressClass called name that Traefik serves.
func IngressClass(name string) *networkingv1.IngressClass {
	return &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       networkingv1.IngressClassSpec{Controller: IngressController},
	}
}

// NewGateway is a Gateway of Traefik's class with the given listeners.
func NewGateway(namespace, name string, listeners []any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"gatewayClassName": Class, "listeners": listeners},
	}}
}

// ParentRef is a route's parentRef to the shared Gateway, on one listener ("" for every listener that admits it).
func ParentRef(listener string) map[string]any {
	ref := map[string]any{"name": Gateway, "namespace": Namespace}
	if listener != "" {
		ref["sectionName"] = listener
	}
	return ref
}

func conditionTrue(obj map[string]any, conditionType string) bool {
	conditions, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == conditionType {
			return m["status"] == "True"
		}
	}
	return false
}
