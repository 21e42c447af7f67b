// Package nodetier is what every product's node tier shares (go test -tags node, make e2e-node): a local cluster
// with a node, each chart and `make images`' images published to a registry by the release tool, installed from it
// with `helm install oci:// --wait` and upgraded to the next release, checks of what the kernel says about the
// chart's Pods, and the host compared before and after.
package nodetier

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// InstallTimeout is `helm install --timeout` for every chart of the tier.
const InstallTimeout = 3 * time.Minute

// Env is the cluster a product's node tier shares.
type Env struct {
	Cluster  *devcluster.Cluster
	Kube     kubernetes.Interface
	Dyn      dynamic.Interface
	RepoRoot string

	testImage    sync.Once
	testImageErr error

	// rel is where the charts are published, on the first Install.
	rel        *releases
	publishErr error
	published  sync.Once
	// stops end what the tier started besides the cluster (the registry).
	stops []func() error
}

// Main starts a cluster with a node (and, when withKyverno, Kyverno installed from its chart with `helm install
// --wait`, its controllers as Pods on the node, as users run it), runs setup and the tests, stops the cluster and
// fails unless the host is as it was before. It is a TestMain's body: os.Exit(nodetier.Main(m, "product", ...)).
// Each of with changes the cluster's options (KyvernoPrevious, to upgrade Kyverno in a test).
func Main(m *testing.M, name string, withKyverno bool, setup func(context.Context, *Env) error, with ...func(*devcluster.Options)) int {
	return Run(m, func(ctx context.Context, dir string) (*devcluster.Cluster, func() error, error) {
		opts := devcluster.Options{Dir: dir, WithKyverno: withKyverno, KyvernoOnNode: withKyverno, WithNode: true, Timeout: 5 * time.Minute}
		for _, w := range with {
			w(&opts)
		}
		c, err := devcluster.Start(ctx, opts)
		if err != nil {
			return nil, nil, err
		}
		return c, c.Stop, nil
	}, name, setup)
}

// Run is Main for a product that starts more than one cluster: start brings up, in dir, the cluster with the node
// (returned) and whatever else, and returns how to stop it all.
func Run(m *testing.M, start func(ctx context.Context, dir string) (*devcluster.Cluster, func() error, error), name string, setup func(context.Context, *Env) error) int {
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	before, err := devcluster.CaptureHost()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	root, err := repo.Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	begin := time.Now()
	// Under the repository (git-ignored), so that a failed CI run leaves the component logs where they can be read.
	c, stop, err := start(ctx, filepath.Join(root, ".devcluster", "node-"+name))
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the cluster with a node:", err)
		return 1
	}
	fmt.Printf("cluster with a node ready in %s (node Ready in %s)\n", time.Since(begin).Round(100*time.Millisecond),
		c.NodeReadyIn().Round(100*time.Millisecond))
	env := &Env{Cluster: c, RepoRoot: root,
		Kube: kubernetes.NewForConfigOrDie(c.RESTConfig()), Dyn: dynamic.NewForConfigOrDie(c.RESTConfig())}
	code := 1
	if err := setup(ctx, env); err != nil {
		fmt.Fprintln(os.Stderr, "setting up:", err)
	} else {
		code = m.Run()
	}
	for _, s := range env.stops {
		if err := s(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping:", err)
			code = 1
		}
	}
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
		return 1
	}
	after, err := devcluster.CaptureHost()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if d := before.Diff(after); len(d) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the node left the host changed:\n  %s\n", strings.Join(d, "\n  "))
		return 1
	}
	fmt.Println("host left as found: sysctls, iptables rules, links, routes, mounts, fixed paths and cgroups")
	return code
}

// Install is what a user does with a chart's releases: `helm install oci://<registry>/charts/<chart> --version
// PreviousVersion --wait`, then `helm upgrade --wait` to CurrentVersion, both with values, images pulled by the node.
// It fails the test unless every Pod of the release is Ready within InstallTimeout each time and runs the current
// release's images.
func (e *Env) Install(t *testing.T, chart string, values map[string]any) *Installed {
	t.Helper()
	i := e.InstallPrevious(t, chart, values)
	i.UpgradeToCurrent(t)
	return i
}

// InstallPrevious is `helm install oci://<registry>/charts/<chart> --version PreviousVersion --wait` into the
// namespace named after the chart, with values; the test then upgrades it with UpgradeToCurrent.
func (e *Env) InstallPrevious(t *testing.T, chart string, values map[string]any) *Installed {
	t.Helper()
	r := e.releases(t)
	ch := e.pullChart(t, chart, PreviousVersion)
	// The `helm test` Pods' image is made from Debian's curl (see HelmTest) and never pulled.
	images := map[string]any{"tests": map[string]any{"image": map[string]any{"pullPolicy": "Never"}}}
	release, err := helmrelease.ForChartName(e.Cluster.Kubeconfig(), ch)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := release.InstallWait(context.Background(), Merge(images, values), InstallTimeout); err != nil {
		t.Fatalf("helm install %s --version %s --wait: %v\n%s", r.chartRef(chart), PreviousVersion, err, e.PodReport(chart))
	}
	t.Logf("helm install %s --version %s --wait: Ready in %s; %s", r.chartRef(chart), PreviousVersion,
		time.Since(begin).Round(100*time.Millisecond), e.pulledImages(t, chart, PreviousVersion))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Pods of %s at the failure:\n%s", chart, e.PodReport(chart))
		}
	})
	return &Installed{Release: release, env: e, chart: chart, images: images, values: values}
}

// Installed is a release Install made.
type Installed struct {
	*helmrelease.Release
	env   *Env
	chart string
	// images are the image values Install set, which every upgrade keeps.
	images map[string]any
	// values are the release's values as last set.
	values map[string]any
}

// UpgradeToCurrent is `helm upgrade <chart> oci://<registry>/charts/<chart> --version CurrentVersion --wait` with
// the release's values: it fails the test unless every Pod is Ready within InstallTimeout, running images of the
// current release that the node pulled.
func (i *Installed) UpgradeToCurrent(t *testing.T) {
	t.Helper()
	ch := i.env.pullChart(t, i.chart, CurrentVersion)
	begin := time.Now()
	if err := i.UpgradeChartWait(context.Background(), ch, Merge(i.images, i.values), InstallTimeout); err != nil {
		t.Fatalf("helm upgrade %s --version %s --wait: %v\n%s", i.chart, CurrentVersion, err, i.env.PodReport(i.chart))
	}
	t.Logf("helm upgrade %s %s --version %s --wait (from %s): Ready in %s; %s", i.chart, i.env.rel.chartRef(i.chart),
		CurrentVersion, PreviousVersion, time.Since(begin).Round(100*time.Millisecond), i.env.pulledImages(t, i.chart, CurrentVersion))
}

// Upgrade is `helm upgrade --wait` to values on top of the image values Install set; it fails the test unless every
// Pod of the release is Ready within InstallTimeout.
func (i *Installed) Upgrade(t *testing.T, what string, values map[string]any) {
	t.Helper()
	if err := i.UpgradeWait(context.Background(), Merge(i.images, values), InstallTimeout); err != nil {
		t.Fatalf("helm upgrade --wait %s (%s): %v\n%s", i.chart, what, err, i.env.PodReport(i.chart))
	}
	i.values = values
}

// Namespace creates a namespace named prefix and a random suffix, deleted (with everything in it) when the test ends.
func (e *Env) Namespace(t *testing.T, prefix string) string {
	t.Helper()
	ns, err := e.Kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Kube.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	return ns.Name
}

// HelmTest runs the release's `helm test` hooks. Their image, curl's official one as the charts' tests.image names
// it, is built from Debian's curl (with busybox-static's sh, grep, cat and nslookup) under the version that curl is:
// a chart whose tag drifts from it fails here.
func (e *Env) HelmTest(t *testing.T, release *helmrelease.Release) {
	t.Helper()
	e.testImage.Do(func() { e.testImageErr = e.importTestImage() })
	if e.testImageErr != nil {
		t.Fatal(e.testImageErr)
	}
	if err := release.Test(context.Background(), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
}

func (e *Env) importTestImage() error {
	out, err := exec.Command("curl", "--version").Output()
	if err != nil {
		return fmt.Errorf("curl --version: %w (make debian-packages installs curl)", err)
	}
	version := regexp.MustCompile(`^curl (\d+\.\d+\.\d+)`).FindStringSubmatch(string(out))
	if version == nil {
		return fmt.Errorf("no curl version in %q", out)
	}
	links := map[string]string{}
	for _, applet := range []string{"sh", "nslookup", "grep", "cat"} {
		links["/bin/"+applet] = "busybox"
	}
	return e.Cluster.BuildHostImage(context.Background(), devcluster.HostImage{
		Ref:   "docker.io/curlimages/curl:" + version[1],
		Files: map[string]string{"/usr/bin/curl": "/usr/bin/curl", "/bin/busybox": "/bin/busybox"}, Links: links,
		Entrypoint: []string{"/usr/bin/curl"}, User: "65532:65532",
	})
}

// Merge merges b into a copy of a, recursively for maps.
func Merge(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = Merge(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// PodReport lists a namespace's Pods with their phase and container states, for a failure message.
func (e *Env) PodReport(namespace string) string {
	pods, err := e.Kube.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s: %s\n", p.Name, p.Status.Phase)
		for _, s := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, "  %s ready=%t restarts=%d state=%+v\n", s.Name, s.Ready, s.RestartCount, s.State)
		}
		if logs, err := e.Kube.CoreV1().Pods(namespace).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: ptr(int64(20))}).DoRaw(context.Background()); err == nil {
			fmt.Fprintf(&b, "  logs:\n%s\n", logs)
		}
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }

// CapNetBindService is the capability to listen on ports below 1024 (its bit in the kernel's sets).
const CapNetBindService = 10

// AssertHardened checks, as the node's kernel sees them, every container of every Pod matching selector: a non-root
// user, a read-only root filesystem, no new privileges and no effective capabilities but the allowed ones.
func (e *Env) AssertHardened(t *testing.T, namespace, selector string, allowed ...uint) {
	t.Helper()
	ctx := context.Background()
	pods, err := e.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatalf("no Pods match %s in %s", selector, namespace)
	}
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			proc, err := e.Cluster.ContainerProcess(ctx, namespace, p.Name, cs.Name)
			if err != nil {
				t.Fatal(err)
			}
			caps, err := strconv.ParseUint(proc.EffectiveCaps, 16, 64)
			if err != nil {
				t.Fatalf("%s/%s container %s: effective capabilities %q: %v", namespace, p.Name, cs.Name, proc.EffectiveCaps, err)
			}
			for _, c := range allowed {
				caps &^= 1 << c
			}
			if proc.UID == 0 || proc.GID == 0 || !proc.ReadOnlyRoot || !proc.NoNewPrivs || caps != 0 {
				t.Errorf("%s/%s container %s runs as %+v; want a non-root user, a read-only root, no new privileges, no capabilities but %v",
					namespace, p.Name, cs.Name, *proc, allowed)
			}
		}
	}
}

// EchoPod is a Pod of the node's echo workload (devcluster.EchoImage) serving HTTP on its port "http" (8080), Ready
// once it answers there; its name is also what it answers with.
func EchoPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "echo", Image: devcluster.EchoImage, ImagePullPolicy: corev1.PullNever,
				Args: []string{"serve"},
				Env: []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"},
				}}},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("http")}},
					PeriodSeconds: 1,
				},
			}},
		},
	}
}

// RunEchoPod creates EchoPod(name, labels) in namespace, waits until it is Ready and returns it.
func (e *Env) RunEchoPod(t *testing.T, namespace, name string, labels map[string]string) *corev1.Pod {
	t.Helper()
	pod, err := StartEchoPod(context.Background(), e.Kube, namespace, name, labels)
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// StartEchoPod creates EchoPod(name, labels) in namespace, waits (a minute at most) until it is Ready and returns it.
func StartEchoPod(ctx context.Context, kube kubernetes.Interface, namespace, name string, labels map[string]string) (*corev1.Pod, error) {
	if _, err := kube.CoreV1().Pods(namespace).Create(ctx, EchoPod(name, labels), metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		if pod, err = kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, err
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		phase := ""
		if pod != nil {
			phase = string(pod.Status.Phase)
		}
		return nil, fmt.Errorf("echo Pod %s/%s not Ready (phase %q): %w", namespace, name, phase, err)
	}
	return pod, nil
}
