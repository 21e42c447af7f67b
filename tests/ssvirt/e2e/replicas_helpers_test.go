//go:build e2e

package e2e_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// replica is an ssvirt-api process, run from the built binary as the chart runs it, so that it can be killed.
type replica struct {
	name string
	cmd  *exec.Cmd
	url  string
	log  string
}

// replicaSet runs ssvirt-api processes on one PostgreSQL database, with leader election and one signing key.
type replicaSet struct {
	binary, kubeconfig, dsn, key, dir string
}

// newReplicaSet builds ssvirt-api, grants the chart's ServiceAccount the Lease rights the chart gives it with
// PostgreSQL, and writes its kubeconfig.
func newReplicaSet(t *testing.T, dsn string) *replicaSet {
	t.Helper()
	ctx := t.Context()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	rs := &replicaSet{dir: t.TempDir(), dsn: dsn, key: base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 48)))}
	rs.binary = filepath.Join(rs.dir, "ssvirt-api")
	if err := repo.BuildCommand(ctx, "ssvirt-api", rs.binary); err != nil {
		t.Fatal(err)
	}
	grantLease(t, root)
	rs.kubeconfig = filepath.Join(rs.dir, "kubeconfig")
	if err := cluster.ServiceAccountKubeconfig(ctx, releaseNS, "ssvirt", rs.kubeconfig); err != nil {
		t.Fatal(err)
	}
	return rs
}

// grantLease creates the chart's leader election Role and RoleBinding as it renders them with PostgreSQL (the
// suite installs it with SQLite), moved from the render's namespace to the release's.
func grantLease(t *testing.T, root string) {
	t.Helper()
	docs, err := render.Render(filepath.Join(root, "charts", "ssvirt"), nil,
		map[string]any{"database": map[string]any{"driver": "postgres", "existingSecret": "db"}})
	if err != nil {
		t.Fatal(err)
	}
	rbac := kubeCS.RbacV1()
	for _, d := range docs {
		if !strings.HasSuffix(d.Object.GetName(), "-leader-election") {
			continue
		}
		switch d.Object.GetKind() {
		case "Role":
			var r rbacv1.Role
			mustConvert(t, d.Object.Object, &r)
			r.Namespace = releaseNS
			_, err = rbac.Roles(releaseNS).Create(t.Context(), &r, metav1.CreateOptions{})
		case "RoleBinding":
			var b rbacv1.RoleBinding
			mustConvert(t, d.Object.Object, &b)
			b.Namespace = releaseNS
			for i := range b.Subjects {
				b.Subjects[i].Namespace = releaseNS
			}
			_, err = rbac.RoleBindings(releaseNS).Create(t.Context(), &b, metav1.CreateOptions{})
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

func mustConvert(t *testing.T, from map[string]any, to any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(from, to); err != nil {
		t.Fatal(err)
	}
}

// start runs a replica and waits until it serves with Kubernetes seen.
func (rs *replicaSet) start(t *testing.T, name string) *replica {
	t.Helper()
	port, err := localproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, url: "http://127.0.0.1:" + strconv.Itoa(port), log: filepath.Join(rs.dir, name+".log")}
	logFile, err := os.Create(r.log)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(rs.binary, "--listen-address=127.0.0.1:"+strconv.Itoa(port), "--database-driver=postgres",
		"--template-namespace="+templateNS, "--resync-period=2s", "--power-timeout="+powerTimeout.String(),
		"--instantiate-timeout="+instantiateTimeout.String(), "--leader-elect", "--metrics-bind-address=0",
		"--health-probe-bind-address=0", "--log-format=console", "--bootstrap-admin="+adminUser)
	r.cmd.Env = append(os.Environ(), "KUBECONFIG="+rs.kubeconfig, "POD_NAMESPACE="+releaseNS,
		"SSVIRT_DATABASE_URL="+rs.dsn, "SSVIRT_JWT_KEY="+rs.key, "SSVIRT_BOOTSTRAP_ADMIN_PASSWORD="+adminPass)
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = logFile.Close()
	t.Cleanup(func() {
		r.kill()
		if t.Failed() {
			data, _ := os.ReadFile(r.log)
			t.Logf("%s's log (last 4000 bytes):\n%s", name, tailString(string(data), 4000))
		}
	})
	eventually(t, name+" ready", time.Minute, func() (bool, string) {
		resp, err := http.Get(r.url + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return r
}

// kill ends the process at once (SIGKILL): no shutdown, no Lease handed over, connections cut.
func (r *replica) kill() {
	if r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	_ = r.cmd.Wait()
}

// leader is the holder of the replicas' Lease, "" when there is none.
func leader(ctx context.Context) string {
	l, err := kubeCS.CoordinationV1().Leases(releaseNS).Get(ctx, "ssvirt-api", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// asInstance lets the suite's client helpers talk to a replica.
func (r *replica) asInstance() *instance { return &instance{url: r.url} }
