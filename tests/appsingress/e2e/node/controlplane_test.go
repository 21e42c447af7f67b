//go:build node

package node_test

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

// TestHostedAPIThroughControlPlaneService: a hosted cluster whose published API endpoint does not resolve from the
// management cluster (its kubeconfig's server and controlPlaneEndpoint name it), and whose hosted control plane
// namespace has the kube-apiserver Service HyperShift creates: the operator reaches the API through that Service,
// still checking the certificate against the kubeconfig's server name, and the chart's HAProxy routes
// api.<cluster>.<baseDomain> there too, resolving the Service's name itself.
func TestHostedAPIThroughControlPlaneService(t *testing.T) {
	chartRelease(t)
	importProbeImage(t)
	ctx := context.Background()
	const name, published = "cp", "api.cp.invalid"
	hostedURL, err := url.Parse(env.Hosted.RESTConfig().Host)
	if err != nil {
		t.Fatal(err)
	}
	hostedPort, _ := strconv.Atoi(hostedURL.Port())

	// The hosted control plane namespace and its API Service, backed by the hosted API server on the node's address.
	hcp := "clusters-" + name
	if _, err := node.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hcp}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Kube.CoreV1().Namespaces().Delete(context.Background(), hcp, metav1.DeleteOptions{}) })
	if _, err := node.Kube.CoreV1().Services(hcp).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-apiserver"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 6443, TargetPort: intstr.FromInt32(int32(hostedPort))}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := node.Kube.DiscoveryV1().EndpointSlices(hcp).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "kube-apiserver", Labels: map[string]string{discoveryv1.LabelServiceName: "kube-apiserver"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{devcluster.HostIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(hostedPort))}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The kubeconfig HyperShift would publish: the published name as server, the certificate checked against the
	// hosted API server's own address (its serving certificate's name here).
	kubeconfig, err := clientcmd.LoadFromFile(env.Hosted.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range kubeconfig.Clusters {
		c.Server = "https://" + net.JoinHostPort(published, "6443")
		c.TLSServerName = devcluster.HostIP
	}
	data, err := clientcmd.Write(*kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	secrets := node.Kube.CoreV1().Secrets(localenv.ClustersNS)
	if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-admin-kubeconfig"}, Data: map[string][]byte{"kubeconfig": data}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = secrets.Delete(context.Background(), name+"-admin-kubeconfig", metav1.DeleteOptions{}) })
	hcGVR := schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	hcs := node.Dyn.Resource(hcGVR).Namespace(localenv.ClustersNS)
	hc, err := hcs.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hcs.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	hc.Object["status"] = map[string]any{
		"kubeconfig":           map[string]any{"name": name + "-admin-kubeconfig"},
		"controlPlaneEndpoint": map[string]any{"host": published, "port": int64(6443)},
	}
	if _, err := hcs.UpdateStatus(ctx, hc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	if _, err := node.Dyn.Resource(localenv.AppsIngressGVR).Namespace(localenv.ClustersNS).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hostedcluster.virtual-ingress.io/v1alpha1", "kind": "AppsIngress",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"hostedClusterRef": map[string]any{"name": name}, "baseDomain": localenv.BaseDomain,
			"metallb": map[string]any{"addressPoolName": localenv.PoolName},
		},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: localenv.ClustersNS, Name: name}
	t.Cleanup(func() { deleteAppsIngress(t, key) })
	backend := "kube-apiserver." + hcp + ".svc.cluster.local:6443"
	poll.Until(t, 3*time.Minute, "Ready through "+backend, func() (bool, string, error) {
		ai, err := node.Dyn.Resource(localenv.AppsIngressGVR).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		phase, _, _ := unstructured.NestedString(ai.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(ai.Object, "status", "message")
		got, _, _ := unstructured.NestedString(ai.Object, "status", "apiBackend")
		endpoint, _, _ := unstructured.NestedString(ai.Object, "status", "apiEndpoint")
		return phase == "Ready" && got == backend && endpoint == published+":6443", phase + " " + got + ": " + msg, nil
	})

	proxySvc, err := node.Kube.CoreV1().Services(nodeChart).Get(ctx, nodeChart+"-proxy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	probeNS := node.Namespace(t, "cp-probe-")
	probe := runProbePod(t, probeNS)
	apiName := "api." + name + "." + localenv.BaseDomain
	poll.Until(t, 2*time.Minute, "the hosted API through the proxy and the control plane Service", func() (bool, string, error) {
		out, err := node.Cluster.Exec(ctx, probeNS, probe, "probe", "curl", "-sk", "-m", "5",
			"--resolve", apiName+":6443:"+proxySvc.Spec.ClusterIP, "https://"+apiName+":6443/readyz")
		return err == nil && out == "ok", out, nil
	})
}
