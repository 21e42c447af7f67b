// Command demo shows the main job of virtual-ingress on a real control plane: it starts the devcluster with Kyverno,
// installs charts/virtual-ingress with Helm, creates the coder VirtualIngress and a Service like the ones the Kubevirt
// CCM creates (random name, stable labels), prints the generated Ingress, then recreates the Service under a new
// name and shows the Ingress following. The cluster keeps running for exploration; `make demo-down` stops it.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

const ns = "tenant-root"

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	// Kyverno answers every ClusterPolicy write with two expected warnings (kyverno.io/v1 is deprecated; status is
	// patched without a status subresource, which this CRD does not have); see the README.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	root, err := repo.Root()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, ".devcluster", "demo")
	step("Starting kube-apiserver, etcd, kube-controller-manager and Kyverno as local processes")
	// Detach: the cluster outlives this program, for exploring; `make demo-down` stops it.
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: dir, WithKyverno: true, Detach: true})
	if err != nil {
		return err
	}
	kube := kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(cluster.RESTConfig())

	step("helm install virtual-ingress ./charts/virtual-ingress")
	if _, err := cluster.InstallRepoChart(ctx, root, "virtual-ingress"); err != nil {
		return err
	}
	if err := virtualingress.WaitAdmissionReady(ctx, dyn, 2*time.Minute); err != nil {
		return err
	}

	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	vi, err := readFixture(filepath.Join(root, "fixtures", "examples", "virtualingresses.yaml"))
	if err != nil {
		return err
	}
	labels := selectorOf(vi)
	first := ccmName()
	step(fmt.Sprintf("The Kubevirt CCM mirrors tenant Service relay/relay-family as %s/%s", ns, first))
	if err := createService(ctx, kube, first, labels); err != nil {
		return err
	}
	step("kubectl apply -f fixtures/examples/virtualingresses.yaml   (VirtualIngress coder, selecting by labels)")
	if _, err := dyn.Resource(virtualingress.GVR).Namespace(ns).Create(ctx, vi, metav1.CreateOptions{}); err != nil {
		return err
	}
	ing, took, err := waitIngress(ctx, kube, first)
	if err != nil {
		return err
	}
	step(fmt.Sprintf("Kyverno generated Ingress coder-generated in %s:", took.Round(time.Millisecond)))
	if err := printYAML(ing); err != nil {
		return err
	}
	if err := printVirtualIngresses(ctx, dyn); err != nil {
		return err
	}

	second := ccmName()
	step(fmt.Sprintf("The tenant Service is recreated: the CCM deletes %s and creates %s", first, second))
	if err := kube.CoreV1().Services(ns).Delete(ctx, first, metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := createService(ctx, kube, second, labels); err != nil {
		return err
	}
	after, took, err := waitIngress(ctx, kube, second)
	if err != nil {
		return err
	}
	step(fmt.Sprintf("The Ingress followed in %s, nobody touched the VirtualIngress (same Ingress, UID %s -> %s):",
		took.Round(time.Millisecond), ing.UID, after.UID))
	fmt.Printf("  spec.rules[0].http.paths[0].backend.service.name: %s\n", after.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name)
	if err := printVirtualIngresses(ctx, dyn); err != nil {
		return err
	}

	fmt.Printf("\nThe cluster keeps running. Explore it with:\n  eval \"$(go run ./tools/devcluster env --dir %s)\"\n  kubectl describe virtualingress -n %s coder\nStop it with: make demo-down\n", dir, ns)
	return nil
}

func step(msg string) { fmt.Printf("\n==> %s\n", msg) }

func ccmName() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "a" + hex.EncodeToString(b)[1:]
}

func readFixture(path string) (*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	return obj, yaml.Unmarshal(data, &obj.Object)
}

func selectorOf(vi *unstructured.Unstructured) map[string]string {
	rules, _, _ := unstructured.NestedSlice(vi.Object, "spec", "rules")
	paths, _, _ := unstructured.NestedSlice(rules[0].(map[string]any), "http", "paths")
	labels, _, _ := unstructured.NestedStringMap(paths[0].(map[string]any), "backend", "service", "matchLabels")
	return labels
}

func createService(ctx context.Context, kube kubernetes.Interface, name string, labels map[string]string) error {
	_, err := kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}, metav1.CreateOptions{})
	return err
}

// waitIngress waits until coder-generated routes to service and says how long that took.
func waitIngress(ctx context.Context, kube kubernetes.Interface, service string) (*networkingv1.Ingress, time.Duration, error) {
	start := time.Now()
	var ing *networkingv1.Ingress
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := kube.NetworkingV1().Ingresses(ns).Get(ctx, "coder-generated", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ing = got
		return got.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name == service, nil
	})
	return ing, time.Since(start), err
}

func printYAML(ing *networkingv1.Ingress) error {
	ing = ing.DeepCopy()
	ing.ManagedFields = nil
	ing.APIVersion, ing.Kind = "networking.k8s.io/v1", "Ingress"
	data, err := yaml.Marshal(ing)
	if err != nil {
		return err
	}
	fmt.Print(string(data))
	return nil
}

// printVirtualIngresses prints what `kubectl get virtualingress` shows (the CRD's printer columns).
func printVirtualIngresses(ctx context.Context, dyn dynamic.Interface) error {
	list, err := dyn.Resource(virtualingress.GVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	fmt.Printf("\n$ kubectl get virtualingress -n %s\n%-8s %-18s %-9s %-6s %-16s %s\n", ns, "NAME", "INGRESS", "RESOLVED", "READY", "REASON", "AGE")
	for _, vi := range list.Items {
		ingress, _, _ := unstructured.NestedString(vi.Object, "status", "ingress", "name")
		resolved, _, _ := virtualingress.Condition(&vi, "Resolved")
		status, reason, _ := virtualingress.Condition(&vi, "Ready")
		age := time.Since(vi.GetCreationTimestamp().Time).Round(time.Second)
		fmt.Printf("%-8s %-18s %-9s %-6s %-16s %s\n", vi.GetName(), ingress, resolved, status, reason, age)
	}
	return nil
}
