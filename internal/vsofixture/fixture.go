// Package vsofixture sets up what the virtualservice-operator works on, for its integration tests and benchmark:
// the Istio VirtualService CRD on a bare API server, and Services with the EndpointSlices a kubelet-less cluster
// never creates by itself.
package vsofixture

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// CRDPath is the VirtualService CRD, relative to the repository root.
const CRDPath = "fixtures/istio/virtualservices.networking.istio.io.yaml"

// VirtualServices is the resource the operator writes by default.
var VirtualServices = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}

// InstallCRD creates the VirtualService CRD and waits until it is Established (served).
func InstallCRD(ctx context.Context, cfg *rest.Config, repoRoot string) error {
	data, err := os.ReadFile(filepath.Join(repoRoot, CRDPath))
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return fmt.Errorf("%s: %w", CRDPath, err)
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// CreateNamespaces creates each namespace that does not exist yet.
func CreateNamespaces(ctx context.Context, kube kubernetes.Interface, names ...string) error {
	for _, n := range names {
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// Port is a TCP Service port.
func Port(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(port)}
}

// Service is a ClusterIP Service with the given ports and no selector, so that kube-controller-manager's
// EndpointSlice controller leaves its endpoints to the test (Pods never run here).
func Service(ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: ports},
	}
}

// EndpointSlice is the slice the EndpointSlice controller would write for svc's port named portName with one
// endpoint of the given readiness (there is no kubelet to make Pods ready).
func EndpointSlice(svc *corev1.Service, portName string, port int32, ready bool) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: svc.Namespace,
			Name:      svc.Name + "-" + portName + "-slice",
			Labels:    map[string]string{discoveryv1.LabelServiceName: svc.Name},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(portName), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{"10.1.0.1"},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)},
		}},
	}
}

// ReadyService creates svc and, for each of its ports, a slice with a ready endpoint. It returns the Service as
// created (with its UID).
func ReadyService(ctx context.Context, kube kubernetes.Interface, svc *corev1.Service) (*corev1.Service, error) {
	// The slices first: the Service's arrival is what makes the operator look, and then they are already there.
	for _, p := range svc.Spec.Ports {
		if _, err := kube.DiscoveryV1().EndpointSlices(svc.Namespace).Create(ctx, EndpointSlice(svc, p.Name, p.Port, true), metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	return kube.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{})
}
