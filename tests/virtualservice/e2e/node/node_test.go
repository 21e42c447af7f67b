//go:build node

package node_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kubeobj"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualservice/fixture"
)

// The node tier of virtualservice-operator (go test -tags node, make e2e-node): the chart installed with `helm
// install --wait`, two replicas of the operator's image electing a leader, real Pods behind the Services (so their
// endpoints are the EndpointSlice controller's), and the leader Pod deleted.
var node *nodetier.Env

const (
	nodeChart   = "virtualservice-operator"
	nodeProd    = "node-prod"
	nodeDev     = "node-dev"
	operatorSel = "app.kubernetes.io/name=virtualservice-operator"
)

var vsGVR = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}

func TestMain(m *testing.M) {
	os.Exit(nodetier.Main(m, "virtualservice", false, func(ctx context.Context, e *nodetier.Env) error {
		node = e
		if err := fixture.InstallCRD(ctx, e.Cluster.RESTConfig(), e.RepoRoot); err != nil {
			return err
		}
		return kubeobj.CreateNamespaces(ctx, e.Kube, nodeProd, nodeDev)
	}))
}

func TestChartOnNode(t *testing.T) {
	release := node.Install(t, nodeChart, map[string]any{
		"replicaCount": 2,
		"config":       map[string]any{"defaultNamespace": nodeProd, "developerNamespaces": []any{nodeDev}},
	})
	node.AssertHardened(t, nodeChart, operatorSel)
	node.HelmTest(t, release.Release)

	servedPair(t, "shop")
	leader := leaderPod(t)
	if err := node.Kube.CoreV1().Pods(nodeChart).Delete(context.Background(), leader, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	// Services created while the leader is going: the next leader must route them, and still the first pair.
	servedPair(t, "cart")
	poll.Until(t, time.Minute, "a new leader", func() (bool, string, error) {
		l := leaderPod(t)
		return l != leader, l, nil
	})
	t.Logf("routes of Services created after the leader Pod's deletion written within %s", time.Since(begin).Round(100*time.Millisecond))
	waitRoutes(t, "shop", "vso-dev-"+nodeDev, "vso-default")
}

// servedPair runs an echo Pod behind a Service called name in the production and in the developer namespace, and
// waits for the operator's VirtualService to route to both.
func servedPair(t *testing.T, name string) {
	t.Helper()
	for _, ns := range []string{nodeProd, nodeDev} {
		labels := map[string]string{"app": name}
		node.RunEchoPod(t, ns, name, labels)
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
		}
		if _, err := node.Kube.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitRoutes(t, name, "vso-dev-"+nodeDev, "vso-default")
}

func waitRoutes(t *testing.T, name string, want ...string) {
	t.Helper()
	poll.Until(t, 2*time.Minute, "VirtualService "+name+" routing "+strings.Join(want, ", "), func() (bool, string, error) {
		vs, err := node.Dyn.Resource(vsGVR).Namespace(nodeProd).Get(context.Background(), name+"-virtual-service", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "no VirtualService", nil
		}
		if err != nil {
			return false, "", err
		}
		var names []string
		list, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
		for _, r := range list {
			n, _ := r.(map[string]any)["name"].(string)
			names = append(names, n)
		}
		return reflect.DeepEqual(names, want), fmt.Sprint(names), nil
	})
}

// leaderPod is the Pod holding the operator's leader Lease (its identity starts with the Pod's name).
func leaderPod(t *testing.T) string {
	t.Helper()
	leaseName := leaderElectionID(t)
	var holder string
	poll.Until(t, time.Minute, "the leader Lease held", func() (bool, string, error) {
		lease, err := node.Kube.CoordinationV1().Leases(nodeChart).Get(context.Background(), leaseName, metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return false, "", err
		}
		holder, _, _ = strings.Cut(*lease.Spec.HolderIdentity, "_")
		return true, holder, nil
	})
	return holder
}

// leaderElectionID is the Lease the chart's Deployment tells the operator to hold (--leader-election-id).
func leaderElectionID(t *testing.T) string {
	t.Helper()
	deployments, err := node.Kube.AppsV1().Deployments(nodeChart).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deployments.Items {
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, arg := range c.Args {
				if id, ok := strings.CutPrefix(arg, "--leader-election-id="); ok {
					return id
				}
			}
		}
	}
	t.Fatal("no container of the chart's Deployments has --leader-election-id")
	return ""
}
