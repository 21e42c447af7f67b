package traffic

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// backendLabel selects a tenant backend's echo Pod from its Services.
const backendLabel = "traffic.virtual-ingress.io/backend"

// RunBackend starts the echo Pod called name in namespace (it answers with its name) and waits until it is Ready.
func RunBackend(ctx context.Context, kube kubernetes.Interface, namespace, name string) error {
	pod := nodetier.EchoPod(name, map[string]string{backendLabel: name})
	if _, err := kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("echo Pod %s/%s not Ready: %w", namespace, name, err)
	}
	return nil
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
