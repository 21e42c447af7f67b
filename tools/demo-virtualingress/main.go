// Command demo-virtualingress shows the main job of virtual-ingress on a real control plane: it starts the devcluster with Kyverno,
// installs charts/virtual-ingress with Helm and its status controller (with a node, as root on Linux, the chart's
// Deployment runs it as a Pod from an image built here; otherwise this process runs it as the Deployment would), creates the
// coder VirtualIngress and a Service like the ones the Kubevirt CCM creates (random name, stable labels), prints the
// generated Ingress and the VirtualIngress going Ready, recreates the Service under a new name and shows both
// following (with a node, curl through Traefik reaches the tenant's echo Pod before and after), then shows a
// VirtualIngress whose labels match no Service and how kubectl explains it. The cluster keeps
// running for exploration; `make demo-down` stops it.
package main

import (
	"context"
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

const (
	ns    = "tenant-root"
	chart = "virtual-ingress"
)

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
	// With a node the chart's own Pod runs the status controller; a node needs root on Linux and Debian's containerd.
	noNode := devcluster.NodeAvailable()
	if noNode == nil {
		step("Starting kube-apiserver, etcd, kube-controller-manager, Kyverno and a node (containerd, kubelet, kube-proxy)")
	} else {
		step("Starting kube-apiserver, etcd, kube-controller-manager and Kyverno as local processes")
		fmt.Printf("    (no node, so the status controller runs as a process: %v)\n", noNode)
	}
	// Detach: the cluster outlives this program, for exploring; `make demo-down` stops it.
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: dir, WithKyverno: true, WithNode: noNode == nil, Detach: true})
	if err != nil {
		return err
	}
	kube := kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(cluster.RESTConfig())
	k := kubectl{cfg: cluster.RESTConfig()}

	if noNode == nil {
		if err := installOnNode(ctx, cluster, root, kube); err != nil {
			return err
		}
	} else {
		step("helm install virtual-ingress ./charts/virtual-ingress")
		if _, err := cluster.InstallRepoChart(ctx, root, chart); err != nil {
			return err
		}
	}
	if err := virtualingress.WaitAdmissionReady(ctx, dyn, 2*time.Minute); err != nil {
		return err
	}
	if noNode != nil {
		stopController, err := startStatusController(ctx, cluster)
		if err != nil {
			return err
		}
		defer func() {
			if err := stopController(); err != nil {
				fmt.Fprintln(os.Stderr, "demo: status controller:", err)
			}
		}()
	}

	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	vi, err := readFixture(filepath.Join(root, "fixtures", "examples", "virtualingresses.yaml"))
	if err != nil {
		return err
	}
	labels := selectorOf(vi)
	// With a node, requests go through a real ingress controller to a real Pod behind the mirrored Service.
	var plane *dataPlane
	newService := serviceWithoutEndpoints
	if noNode == nil {
		class, _, _ := unstructured.NestedString(vi.Object, "spec", "ingressClassName")
		if plane, err = startDataPlane(ctx, cluster, kube, dir, class, hostOf(vi)); err != nil {
			return err
		}
		defer plane.stop()
		newService = plane.service
	}
	first := virtualingress.CCMName()
	step(fmt.Sprintf("The Kubevirt CCM mirrors tenant Service relay/relay-family as %s/%s", ns, first))
	if _, err := kube.CoreV1().Services(ns).Create(ctx, newService(first, labels), metav1.CreateOptions{}); err != nil {
		return err
	}
	step("kubectl apply -f fixtures/examples/virtualingresses.yaml   (VirtualIngress coder, selecting by labels)")
	start := time.Now()
	if _, err := dyn.Resource(virtualingress.GVR).Namespace(ns).Create(ctx, vi, metav1.CreateOptions{}); err != nil {
		return err
	}
	ing, err := waitIngress(ctx, kube, first)
	if err != nil {
		return err
	}
	step(fmt.Sprintf("Kyverno generated Ingress %s in %s:", virtualingress.GeneratedName("coder"), since(start)))
	if err := printYAML(ing); err != nil {
		return err
	}
	if err := waitReady(ctx, dyn, "coder", first); err != nil {
		return err
	}
	step(fmt.Sprintf("The status controller checked the Ingress: coder is Ready %s after it was created", since(start)))
	if err := k.get(ctx, virtualingress.GVR, ns); err != nil {
		return err
	}
	if plane != nil {
		step("A request through the ingress controller reaches the tenant's workload")
		if err := plane.curl(ctx); err != nil {
			return err
		}
	}

	second := virtualingress.CCMName()
	step(fmt.Sprintf("The tenant Service is recreated: the CCM deletes %s and creates %s", first, second))
	start = time.Now()
	if err := kube.CoreV1().Services(ns).Delete(ctx, first, metav1.DeleteOptions{}); err != nil {
		return err
	}
	if _, err := kube.CoreV1().Services(ns).Create(ctx, newService(second, labels), metav1.CreateOptions{}); err != nil {
		return err
	}
	after, err := waitIngress(ctx, kube, second)
	if err != nil {
		return err
	}
	step(fmt.Sprintf("The Ingress followed in %s, nobody touched the VirtualIngress (same Ingress, UID %s -> %s):",
		since(start), ing.UID, after.UID))
	fmt.Printf("  spec.rules[0].http.paths[0].backend.service.name: %s\n", after.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name)
	if err := waitReady(ctx, dyn, "coder", second); err != nil {
		return err
	}
	step(fmt.Sprintf("coder is Ready again with the new Service %s after the recreation", since(start)))
	if err := k.get(ctx, virtualingress.GVR, ns); err != nil {
		return err
	}
	if plane != nil {
		step("The same request after the recreation, through the Ingress that followed the new Service")
		if err := plane.curl(ctx); err != nil {
			return err
		}
	}

	step("A mistake users make: VirtualIngress wiki selects labels no Service has")
	wiki := virtualingress.New(ns, "wiki", map[string]any{
		"ingressClassName": "tenant-root",
		"rules": []any{virtualingress.Rule("wiki.enigma.vgijssel.nl", virtualingress.Path("/",
			virtualingress.SelectorBackend(map[string]string{"cluster.x-k8s.io/tenant-service-name": "wiki"}, 80)))},
	})
	if _, err := dyn.Resource(virtualingress.GVR).Namespace(ns).Create(ctx, wiki, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := waitNotReady(ctx, dyn, "wiki"); err != nil {
		return err
	}
	if err := k.get(ctx, virtualingress.GVR, ns); err != nil {
		return err
	}
	if err := k.describe(virtualingress.GVR, "VirtualIngress", ns, "wiki"); err != nil {
		return err
	}

	stops := "the status controller stops with this program"
	if noNode == nil {
		stops = "and so does the status controller's Pod; Traefik stopped with this program"
	}
	fmt.Printf("\nThe cluster keeps running (%s). Explore it with:\n"+
		"  eval \"$(go run ./tools/devcluster env --dir %s)\"\n  kubectl describe virtualingress -n %s coder\nStop it with: make demo-down\n", stops, dir, ns)
	return nil
}

func step(msg string) { fmt.Printf("\n==> %s\n", msg) }

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

// serviceWithoutEndpoints is the mirrored Service called name when no Pod can run: nothing answers behind it.
func serviceWithoutEndpoints(name string, labels map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
}

func hostOf(vi *unstructured.Unstructured) string {
	rules, _, _ := unstructured.NestedSlice(vi.Object, "spec", "rules")
	host, _, _ := unstructured.NestedString(rules[0].(map[string]any), "host")
	return host
}

// waitIngress waits until the Ingress generated from coder routes to service.
func waitIngress(ctx context.Context, kube kubernetes.Interface, service string) (*networkingv1.Ingress, error) {
	var ing *networkingv1.Ingress
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := kube.NetworkingV1().Ingresses(ns).Get(ctx, virtualingress.GeneratedName("coder"), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ing = got
		return got.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name == service, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s never routed to %s: %w", virtualingress.GeneratedName("coder"), service, err)
	}
	return ing, nil
}

// waitReady waits until the status controller says the VirtualIngress name is Ready with its Ingress up to date, and
// its status reports service as the backend's resolution.
func waitReady(ctx context.Context, dyn dynamic.Interface, name, service string) error {
	return waitStatus(ctx, dyn, name, "Ready=True IngressUpToDate with Service "+service, func(vi *unstructured.Unstructured) bool {
		for _, b := range virtualingress.Backends(vi) {
			if b.Service != service {
				return false
			}
		}
		status, reason, _ := virtualingress.Condition(vi, "Ready")
		return status == "True" && reason == "IngressUpToDate"
	})
}

// waitNotReady waits until the VirtualIngress name has both verdicts: Resolved from the policies, Ready from the
// status controller.
func waitNotReady(ctx context.Context, dyn dynamic.Interface, name string) error {
	return waitStatus(ctx, dyn, name, "Resolved=False and Ready=False", func(vi *unstructured.Unstructured) bool {
		resolved, _, _ := virtualingress.Condition(vi, "Resolved")
		ready, _, _ := virtualingress.Condition(vi, "Ready")
		return resolved == "False" && ready == "False"
	})
}

// waitStatus polls the VirtualIngress name until done says its status is what the demo waits for.
func waitStatus(ctx context.Context, dyn dynamic.Interface, name, what string, done func(*unstructured.Unstructured) bool) error {
	var last *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		vi, err := dyn.Resource(virtualingress.GVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = vi
		return done(vi), nil
	})
	if err != nil {
		return fmt.Errorf("%s never reported %s (last status: %v): %w", name, what, statusOf(last), err)
	}
	return nil
}

func statusOf(obj *unstructured.Unstructured) any {
	if obj == nil {
		return nil
	}
	return obj.Object["status"]
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }

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
