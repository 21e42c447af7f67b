// Command demo-virtualservice shows the virtualservice-operator's main job on a local control plane with Istio's
// VirtualService CRD: a Service in the production namespace gets a VirtualService; the same Service, ready, in a
// developer namespace adds a route matched on the developer header; deleting it takes the route away. The operator
// runs as its own binary. Everything stops at the end. `make demo-virtualservice`.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kubeobj"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualservice/fixture"
)

const (
	prodNS     = "prod"
	devNS      = "dev-alice"
	operatorNS = "virtualservice-operator"
	header     = "x-developer"
	service    = "shop"
	// vsName is what the default template (internal/virtualservice/config) names the Service's VirtualService.
	vsName = service + "-virtual-service"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "demo-virtualservice:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "virtualservice-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	step("starting kube-apiserver, etcd and kube-controller-manager as local processes, with Istio's VirtualService CRD")
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: dir})
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }()
	cfg := cluster.RESTConfig()
	kube := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	if err := fixture.InstallCRD(ctx, cfg, root); err != nil {
		return err
	}
	if err := kubeobj.CreateNamespaces(ctx, kube, prodNS, devNS, operatorNS); err != nil {
		return err
	}
	config := fixture.ConfigText(prodNS, []string{devNS}, header)
	step("the operator's ConfigMap %s/%s (config.yaml):\n%s", operatorNS, fixture.OperatorConfigMap, strings.TrimSpace(config))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: fixture.OperatorConfigMap},
		Data: map[string]string{"config.yaml": config}}
	if _, err := kube.CoreV1().ConfigMaps(operatorNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return err
	}

	step("building and starting virtualservice-operator")
	bin := filepath.Join(dir, "virtualservice-operator")
	if err := repo.BuildCommand(ctx, "virtualservice-operator", bin); err != nil {
		return err
	}
	ports, err := localproc.FreePorts(2)
	if err != nil {
		return err
	}
	op, err := localproc.Start("virtualservice-operator", filepath.Join(dir, "operator.log"),
		[]string{"KUBECONFIG=" + cluster.Kubeconfig()}, bin,
		fixture.OperatorArgs(operatorNS, fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1]))...)
	if err != nil {
		return err
	}
	defer func() { _ = op.Stop() }()

	step("kubectl create: Service %s/%s, ready (its EndpointSlice has a ready endpoint)", prodNS, service)
	if _, err := fixture.ReadyService(ctx, kube, fixture.Service(prodNS, service, fixture.Port("http", 80))); err != nil {
		return err
	}
	if err := show(ctx, dyn, op, 1); err != nil {
		return err
	}

	step("kubectl create: the same Service in developer namespace %s, ready", devNS)
	if _, err := fixture.ReadyService(ctx, kube, fixture.Service(devNS, service, fixture.Port("http", 80))); err != nil {
		return err
	}
	if err := show(ctx, dyn, op, 2); err != nil {
		return err
	}

	step("kubectl delete: Service %s/%s", devNS, service)
	if err := kube.CoreV1().Services(devNS).Delete(ctx, service, metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := show(ctx, dyn, op, 1); err != nil {
		return err
	}
	step("done: requests with header %s: %s go to %s/%s, all others to %s/%s; everything stops now", header, devNS, devNS, service, prodNS, service)
	return nil
}

// show waits for the VirtualService to hold that many HTTP routes and prints its spec as kubectl would.
func show(ctx context.Context, dyn dynamic.Interface, op *localproc.Process, routes int) error {
	var vs *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		vs, err = dyn.Resource(fixture.VirtualServices).Namespace(prodNS).Get(ctx, vsName, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // not written yet: keep waiting
		}
		http, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
		return len(http) == routes, nil
	})
	if err != nil {
		return fmt.Errorf("VirtualService %s/%s with %d routes: %w; operator log:\n%s", prodNS, vsName, routes, err, op.Logs())
	}
	out, err := yaml.Marshal(map[string]any{"spec": vs.Object["spec"]})
	if err != nil {
		return err
	}
	fmt.Printf("kubectl get virtualservice -n %s %s -o yaml (spec):\n%s", prodNS, vsName, out)
	return nil
}

func step(format string, args ...any) {
	fmt.Printf("\n== "+format+"\n", args...)
}
