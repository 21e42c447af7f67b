//go:build node

package nodetier_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
)

// The node proving itself (go test -tags node, part of make e2e-node; root on Linux): Pods, Services, cluster DNS,
// the kubelet's identity, PersistentVolumeClaims, one node per machine, and (in Main) the host compared before and
// after.
var env *nodetier.Env

func TestMain(m *testing.M) {
	os.Exit(nodetier.Main(m, "devcluster", false, func(_ context.Context, e *nodetier.Env) error {
		env = e
		return hostComparisonSeesTheNode()
	}))
}

// hostComparisonSeesTheNode: the comparison must see what a running node changes, or its silence after Stop proves
// nothing.
func hostComparisonSeesTheNode() error {
	before, err := devcluster.LoadHostStateOf(env.Cluster.Dir())
	if err != nil {
		return err
	}
	during, err := devcluster.CaptureHost()
	if err != nil {
		return err
	}
	changes := before.Diff(during)
	if !slices.Contains(changes, "link added: vi-node0") {
		return fmt.Errorf("the host comparison does not see the running node's link:\n  %s", strings.Join(changes, "\n  "))
	}
	fmt.Fprintf(os.Stderr, "the running node changed %d things on the host, e.g.:\n  %s\n", len(changes), strings.Join(sample(changes), "\n  "))
	return nil
}

// sample is one line of each kind of change.
func sample(changes []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range changes {
		kind := strings.Fields(c)[0]
		if !seen[kind] {
			seen[kind] = true
			out = append(out, c)
		}
	}
	return out
}

func kube(t *testing.T) kubernetes.Interface {
	t.Helper()
	return env.Kube
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	poll.Until(t, timeout, what, func() (bool, string, error) {
		ok, err := cond()
		return ok, "", err
	})
}

// Pods run, are probed, log and take exec; a ClusterIP Service answers from the host and, by its DNS name, from
// another Pod; Pods reach the API server at the `kubernetes` Service.
func TestPodsServicesAndDNS(t *testing.T) {
	ctx := context.Background()
	k := kube(t)
	ns := env.Namespace(t, "node-test-")
	svc, err := k.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "server"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "server"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"server", "client"} {
		env.RunEchoPod(t, ns, name, map[string]string{"app": name})
	}

	logs, err := k.CoreV1().Pods(ns).GetLogs("server", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || !strings.Contains(string(logs), "echo server listening") {
		t.Errorf("logs of the server Pod: %q, %v", logs, err)
	}

	var out string
	eventually(t, 30*time.Second, "the Service from another Pod by its DNS name", func() (bool, error) {
		out, err = env.Cluster.Exec(ctx, ns, "client", "echo", "/usr/local/bin/echo", "get", "http://server."+ns+".svc.cluster.local/x")
		return err == nil && strings.Contains(out, "server GET server."+ns+".svc.cluster.local/x"), err
	})
	out, err = env.Cluster.Exec(ctx, ns, "client", "echo", "/usr/local/bin/echo", "get", "https://kubernetes.default.svc/readyz")
	if err != nil || !strings.Contains(out, "200 OK") {
		t.Errorf("the API server from a Pod through the kubernetes Service: %q, %v", out, err)
	}
	out, err = env.Cluster.Exec(ctx, ns, "client", "echo", "/usr/local/bin/echo", "lookup", "example.com")
	if err == nil {
		t.Errorf("cluster DNS answered a name outside the cluster (nothing may leave the machine): %q", out)
	}

	client := &http.Client{Timeout: 5 * time.Second}
	eventually(t, 30*time.Second, "the Service's ClusterIP from the host", func() (bool, error) {
		resp, err := client.Get("http://" + svc.Spec.ClusterIP + "/host")
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// The kubelet is system:node:<name>, limited by the Node authorizer to what its own Pods use.
func TestKubeletIdentity(t *testing.T) {
	ctx := context.Background()
	k := kube(t)
	ns := env.Namespace(t, "node-test-")
	if _, err := k.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "unused"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", env.Cluster.Dir()+"/node/kubelet.kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	kubelet, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kubelet.CoreV1().Secrets(ns).Get(ctx, "unused", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the kubelet read a Secret no Pod of its node uses: %v", err)
	}
	node, err := kubelet.CoreV1().Nodes().Get(ctx, devcluster.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the kubelet cannot read its own Node: %v", err)
	}
	node.Labels["node-role.kubernetes.io/control-plane"] = ""
	if _, err := kubelet.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("NodeRestriction let the kubelet set a node-role label on itself: %v", err)
	}
}

// A PVC of the default StorageClass binds: charts with a PVC install unchanged.
func TestPersistentVolumeClaim(t *testing.T) {
	ctx := context.Background()
	k := kube(t)
	ns := env.Namespace(t, "node-test-")
	_, err := k.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "PVC bound", func() (bool, error) {
		pvc, err := k.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
		return err == nil && pvc.Status.Phase == corev1.ClaimBound, err
	})
}

// A second node on the same machine is refused with a message that says which one runs.
func TestOneNodePerMachine(t *testing.T) {
	_, err := devcluster.Start(context.Background(), devcluster.Options{Dir: t.TempDir(), WithNode: true, Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "one node per machine") || !strings.Contains(err.Error(), env.Cluster.Dir()) {
		t.Fatalf("second node: %v", err)
	}
}
