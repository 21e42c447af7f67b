// Command demo-ssvirt shows ssvirt-api's main job on a real control plane with its embedded SQLite database: it
// starts the devcluster, installs the template.openshift.io stub CRDs and a Template, runs the ssvirt-api binary
// as a local process, then creates an organization and a VDC with curl and prints the namespace and the
// ResourceQuota Kubernetes now holds. Everything it started is stopped at the end.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/fixture"
)

const password = "demo-admin-password"

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "demo-ssvirt:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, ".devcluster", "demo-ssvirt")
	step("Starting kube-apiserver, etcd and kube-controller-manager as local processes")
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: dir})
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }()
	kube := kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(cluster.RESTConfig())
	step("Installing the template.openshift.io stub CRDs and a Template in namespace openshift")
	if err := fixture.InstallCRDs(ctx, cluster.RESTConfig()); err != nil {
		return err
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openshift"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := fixture.CreateTemplate(ctx, dyn, fixture.Template("openshift", "fedora", false)); err != nil {
		return err
	}

	step("Building and starting ssvirt-api (SQLite in " + filepath.Join(dir, "ssvirt.db") + ")")
	bin := filepath.Join(dir, "ssvirt-api")
	if err := repo.BuildCommand(ctx, "ssvirt-api", bin); err != nil {
		return err
	}
	port, err := localproc.FreePort()
	if err != nil {
		return err
	}
	key := make([]byte, 48)
	_, _ = rand.Read(key)
	api := exec.CommandContext(ctx, bin, "--listen-address=127.0.0.1:"+strconv.Itoa(port), "--sqlite-path="+filepath.Join(dir, "ssvirt.db"),
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-format=console", "--log-level=error")
	api.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig(), "SSVIRT_JWT_KEY="+base64.StdEncoding.EncodeToString(key),
		"SSVIRT_BOOTSTRAP_ADMIN_PASSWORD="+password)
	api.Stdout, api.Stderr = os.Stderr, os.Stderr
	if err := api.Start(); err != nil {
		return err
	}
	defer func() { _ = api.Process.Kill(); _ = api.Wait() }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitReady(ctx, base); err != nil {
		return err
	}

	step("Logging in as the bootstrap administrator")
	headers, err := curl("-s", "-o", "/dev/null", "-D", "-", "-X", "POST", "-u", "admin@System:"+password, base+"/cloudapi/1.0.0/sessions")
	if err != nil {
		return err
	}
	token := ""
	for _, line := range strings.Split(headers, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "X-VMWARE-VCLOUD-ACCESS-TOKEN") {
			token = strings.TrimSpace(v)
		}
	}
	if token == "" {
		return fmt.Errorf("no token in the login answer:\n%s", headers)
	}
	auth := "Authorization: Bearer " + token
	step("Creating organization acme")
	out, err := curl("-s", "-H", auth, "-d", `{"name":"acme","displayName":"ACME Corp"}`, base+"/cloudapi/1.0.0/orgs")
	if err != nil {
		return err
	}
	fmt.Println(out)
	orgID := between(out, `"id":"`, `"`)
	step("Creating VDC web in acme: 4 CPUs, 8 GiB memory, 100 GiB storage")
	out, err = curl("-s", "-H", auth, "-d", `{"name":"web","computeCapacity":{"cpu":{"limit":4000},"memory":{"limit":8192}},"storageCapacity":{"limit":100}}`,
		base+"/api/admin/org/"+orgID+"/vdcs")
	if err != nil {
		return err
	}
	fmt.Println(out)
	ns := between(out, `"namespace":"`, `"`)

	step("The namespace " + ns + " and its ResourceQuota in Kubernetes")
	n, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return err
	}
	printYAML(map[string]any{"name": n.Name, "labels": n.Labels, "annotations": n.Annotations})
	q, err := kube.CoreV1().ResourceQuotas(ns).Get(ctx, "vdc-quota", metav1.GetOptions{})
	if err != nil {
		return err
	}
	printYAML(map[string]any{"name": q.Name, "namespace": q.Namespace, "hard": q.Spec.Hard})

	step("The catalog: a catalog of acme lists the Template as an item")
	if out, err = curl("-s", "-H", auth, "-d", `{"name":"vms","org":{"id":"`+orgID+`"}}`, base+"/cloudapi/1.0.0/catalogs"); err != nil {
		return err
	}
	catID := between(out, `"id":"`, `"`)
	if out, err = curl("-s", "-H", auth, base+"/cloudapi/1.0.0/catalogs/"+catID+"/catalogItems"); err != nil {
		return err
	}
	fmt.Println(out)
	step("Done; stopping ssvirt-api and the cluster")
	return nil
}

func step(s string) { fmt.Printf("\n==> %s\n", s) }

func curl(args ...string) (string, error) {
	fmt.Printf("$ curl %s\n", strings.Join(redact(args), " "))
	out, err := exec.Command("curl", args...).Output()
	return strings.TrimSpace(string(out)), err
}

// redact keeps the token and password out of the printed command lines.
func redact(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "Authorization: Bearer "):
			a = "'Authorization: Bearer $TOKEN'"
		case strings.Contains(a, password):
			a = "'admin@System:$PASSWORD'"
		case strings.HasPrefix(a, "{"):
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}

func between(s, start, end string) string {
	_, rest, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, end)
	return v
}

func printYAML(v any) {
	data, _ := yaml.Marshal(v)
	fmt.Print(string(data))
}

func waitReady(ctx context.Context, base string) error {
	// Ready and not degraded: Kubernetes seen, so that the VDC is made at once.
	return poll.Wait(ctx, 2*time.Minute, "ssvirt-api ready (GET /readyz)", func() (bool, string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, "", err
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK && strings.HasPrefix(string(body), `{"status":"ok"`),
			fmt.Sprintf("%s %s", resp.Status, strings.TrimSpace(string(body))), nil
	})
}
