package traffic

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// backendLabel selects a tenant backend's echo Pod from its Services.
const backendLabel = "traffic.virtual-ingress.io/backend"

// RunBackend starts the echo Pod called name in namespace (it answers with its name) and waits until it is Ready.
func RunBackend(ctx context.Context, kube kubernetes.Interface, namespace, name string) error {
	_, err := nodetier.StartEchoPod(ctx, kube, namespace, name, map[string]string{backendLabel: name})
	return err
}

// TenantService is a Service as the Kubevirt CCM mirrors one: a random name (virtualingress.CCMName), the tenant's
// labels, and a port named "http" (80) to the echo Pod called backend.
func TenantService(labels map[string]string, backend string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: virtualingress.CCMName(), Labels: labels},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{backendLabel: backend},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
}
