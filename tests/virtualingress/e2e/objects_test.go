//go:build e2e

package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

var virtualIngressGVR = virtualingress.GVR

// relayLabels are the labels the Kubevirt CCM puts on the mirror of tenant Service relay/relay-family.
func relayLabels() map[string]string {
	return map[string]string{
		"cluster.x-k8s.io/cluster-name":             "kubernetes-cluster-docs-infra-prod",
		"cluster.x-k8s.io/tenant-service-name":      "relay-family",
		"cluster.x-k8s.io/tenant-service-namespace": "relay",
	}
}

// ccmName is a name like the ones the Kubevirt CCM gives mirrored Services.
func ccmName(t *testing.T) string {
	t.Helper()
	return virtualingress.CCMName()
}

// newNamespace creates a namespace for one test and deletes it (and so everything in it) when the test ends.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns, err := env.kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	// Registered after the deletion, so it runs before it.
	dumpNamespaceOnFailure(t, ns.Name)
	return ns.Name
}

// createService creates a CCM-style LoadBalancer Service with one port, http (80).
func createService(t *testing.T, ns, name string, labels map[string]string) *corev1.Service {
	t.Helper()
	return createServiceWithPorts(t, ns, name, labels, corev1.ServicePort{Name: "http", Port: 80})
}

// createServiceWithPorts creates a CCM-style LoadBalancer Service with the given ports.
func createServiceWithPorts(t *testing.T, ns, name string, labels map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	t.Helper()
	svc, err := env.kube.CoreV1().Services(ns).Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Service %s/%s: %v", ns, name, err)
	}
	return svc
}

func deleteService(t *testing.T, ns, name string) {
	t.Helper()
	if err := env.kube.CoreV1().Services(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting Service %s/%s: %v", ns, name, err)
	}
}

// virtualIngress builds a VirtualIngress with the given spec; the coder example's annotations are set so that
// every test also checks they survive.
func virtualIngress(ns, name string, spec map[string]any) *unstructured.Unstructured {
	vi := virtualingress.New(ns, name, spec)
	vi.SetAnnotations(map[string]string{
		"cert-manager.io/cluster-issuer":                   "letsencrypt-prod",
		"nginx.ingress.kubernetes.io/proxy-http-version":   "1.1",
		"nginx.ingress.kubernetes.io/proxy-buffering":      "off",
		"nginx.ingress.kubernetes.io/proxy-read-timeout":   "3600",
		"nginx.ingress.kubernetes.io/proxy-send-timeout":   "3600",
		"kubectl.kubernetes.io/last-applied-configuration": `{"kind":"VirtualIngress"}`,
		"argocd.argoproj.io/tracking-id":                   "tenant:virtual-ingress.io/VirtualIngress:" + ns + "/" + name,
	})
	vi.SetLabels(map[string]string{"team": "platform", "app.kubernetes.io/instance": "tenant-ingresses"})
	return vi
}

func createVirtualIngress(t *testing.T, vi *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := env.dyn.Resource(virtualIngressGVR).Namespace(vi.GetNamespace()).Create(context.Background(), vi, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating VirtualIngress %s/%s: %v", vi.GetNamespace(), vi.GetName(), err)
	}
	return out
}

func getVirtualIngress(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	vi, err := env.dyn.Resource(virtualIngressGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting VirtualIngress %s/%s: %v", ns, name, err)
	}
	return vi
}

// resolvedCoder creates a CCM-style Service and the coder VirtualIngress selecting it, and waits for the generated
// Ingress: the starting point of most scenarios.
func resolvedCoder(t *testing.T, ns string) (service string, ing *networkingv1.Ingress) {
	t.Helper()
	service = ccmName(t)
	createService(t, ns, service, relayLabels())
	createVirtualIngress(t, virtualIngress(ns, "coder", virtualingress.CoderSpec(relayLabels())))
	return service, waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), service)
}
