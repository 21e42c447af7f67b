package controller

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

// HostedClusterGVK is HyperShift's HostedCluster, read as unstructured so that the operator does not depend on
// HyperShift's Go module: it reads status.kubeconfig.name and status.controlPlaneEndpoint only.
var HostedClusterGVK = schema.GroupVersionKind{Group: "hypershift.openshift.io", Version: "v1beta1", Kind: "HostedCluster"}

// kubeconfigKey is the key of the kubeconfig in HyperShift's admin kubeconfig Secret.
const kubeconfigKey = "kubeconfig"

// target is what the management cluster says about one hosted cluster.
type target struct {
	kubeconfig []byte
	secret     types.NamespacedName
	// apiEndpoint is host:port of the hosted API server: status.controlPlaneEndpoint, else the kubeconfig's server.
	apiEndpoint string
}

// failure is a reason and message for the status, with the phase it implies.
type failure struct {
	phase   v1alpha1.Phase
	reason  string
	message string
}

func (f *failure) Error() string { return f.reason + ": " + f.message }

func degraded(reason, format string, args ...any) *failure {
	return &failure{phase: v1alpha1.PhaseDegraded, reason: reason, message: fmt.Sprintf(format, args...)}
}

func pending(reason, format string, args ...any) *failure {
	return &failure{phase: v1alpha1.PhasePending, reason: reason, message: fmt.Sprintf(format, args...)}
}

// clusterName is <cluster> in the DNS names: spec.clusterName, else the HostedCluster's name.
func clusterName(ai *v1alpha1.AppsIngress) string {
	if ai.Spec.ClusterName != "" {
		return ai.Spec.ClusterName
	}
	return ai.Spec.HostedClusterRef.Name
}

func hostedClusterKey(ai *v1alpha1.AppsIngress) types.NamespacedName {
	ns := ai.Spec.HostedClusterRef.Namespace
	if ns == "" {
		ns = ai.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: ai.Spec.HostedClusterRef.Name}
}

// resolveTarget reads the HostedCluster and its kubeconfig Secret.
func resolveTarget(ctx context.Context, c client.Reader, ai *v1alpha1.AppsIngress) (*target, *failure) {
	key := hostedClusterKey(ai)
	hc := &unstructured.Unstructured{}
	hc.SetGroupVersionKind(HostedClusterGVK)
	if err := c.Get(ctx, key, hc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, degraded("HostedClusterNotFound", "HostedCluster %s not found", key)
		}
		return nil, degraded("HostedClusterReadFailed", "reading HostedCluster %s: %v", key, err)
	}
	t := &target{}
	secretName, _, _ := unstructured.NestedString(hc.Object, "status", "kubeconfig", "name")
	if secretName == "" {
		return nil, pending("KubeconfigNotPublished", "HostedCluster %s has no status.kubeconfig.name yet", key)
	}
	t.secret = types.NamespacedName{Namespace: key.Namespace, Name: secretName}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, t.secret, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, degraded("KubeconfigMissing", "kubeconfig Secret %s (status.kubeconfig of HostedCluster %s) not found", t.secret, key)
		}
		return nil, degraded("KubeconfigReadFailed", "reading kubeconfig Secret %s: %v", t.secret, err)
	}
	t.kubeconfig = secret.Data[kubeconfigKey]
	if len(t.kubeconfig) == 0 {
		return nil, degraded("KubeconfigMissing", "Secret %s has no key %q", t.secret, kubeconfigKey)
	}
	host, _, _ := unstructured.NestedString(hc.Object, "status", "controlPlaneEndpoint", "host")
	port, _, _ := unstructured.NestedInt64(hc.Object, "status", "controlPlaneEndpoint", "port")
	if host != "" && port > 0 {
		t.apiEndpoint = net.JoinHostPort(host, strconv.FormatInt(port, 10))
	}
	return t, nil
}

// endpointFromServer is host:port of a kubeconfig's server URL (port 443 when it names none).
func endpointFromServer(server string) string {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return ""
	}
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "443")
}
