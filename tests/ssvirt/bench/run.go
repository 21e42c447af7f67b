package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/fixture"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/pgserver"
)

const adminPassword = "bench-admin-password"

// workbench is what every run shares: the control plane with its Templates and the built binary.
type workbench struct {
	dir, bin, kubeconfig string
	dyn                  dynamic.Interface
}

// run measures the same workload on each database in turn, against one control plane: SQLite, then PostgreSQL.
func run(ctx context.Context, o options) (report, error) {
	var rep report
	dir, err := os.MkdirTemp("", "ssvirt-bench-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: filepath.Join(dir, "cluster")})
	if err != nil {
		return rep, err
	}
	defer func() { _ = cluster.Stop() }()
	cfg := cluster.RESTConfig()
	kubeCS, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return rep, err
	}
	b := workbench{dir: dir, bin: filepath.Join(dir, "ssvirt-api"), kubeconfig: cluster.Kubeconfig()}
	if b.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return rep, err
	}
	if err := fixture.InstallCRDs(ctx, cfg); err != nil {
		return rep, err
	}
	if _, err := kubeCS.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openshift"}}, metav1.CreateOptions{}); err != nil {
		return rep, err
	}
	for i := range o.templates {
		if err := fixture.CreateTemplate(ctx, b.dyn, fixture.Template("openshift", fmt.Sprintf("vm-%04d", i), false)); err != nil {
			return rep, err
		}
	}
	if err := repo.BuildCommand(ctx, "ssvirt-api", b.bin); err != nil {
		return rep, err
	}
	pg, err := pgserver.Start(ctx)
	if err != nil {
		return rep, err
	}
	defer func() { _ = pg.Close() }()
	for _, db := range []struct{ driver, dsn string }{
		{store.DriverSQLite, filepath.Join(dir, "ssvirt.db")},
		{store.DriverPostgres, pg.DSN()},
	} {
		res, err := b.measure(ctx, o, db.driver, db.dsn)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", db.driver, err)
		}
		rep.Runs = append(rep.Runs, res)
	}
	return rep, nil
}

// measure runs ssvirt-api on one database, out of process so that its memory is its own, and the workload
// against it, in an organization of its own.
func (b workbench) measure(ctx context.Context, o options, driver, dsn string) (results, error) {
	res := results{Database: driver, Templates: o.templates, VDCs: o.vdcs, Concurrency: o.concurrency, CatalogListTarget: 10}
	port, err := localproc.FreePort()
	if err != nil {
		return res, err
	}
	key := make([]byte, 48)
	_, _ = rand.Read(key)
	proc := exec.CommandContext(ctx, b.bin, "--listen-address=127.0.0.1:"+strconv.Itoa(port), "--database-driver="+driver,
		"--sqlite-path="+dsn, "--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-level=error")
	proc.Env = append(os.Environ(), "KUBECONFIG="+b.kubeconfig, "SSVIRT_JWT_KEY="+base64.StdEncoding.EncodeToString(key),
		"SSVIRT_BOOTSTRAP_ADMIN_PASSWORD="+adminPassword, "SSVIRT_DATABASE_URL="+dsn)
	proc.Stdout, proc.Stderr = os.Stderr, os.Stderr
	if err := proc.Start(); err != nil {
		return res, err
	}
	defer func() { _ = proc.Process.Kill(); _ = proc.Wait() }()
	c := &client{base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	if err := c.waitReady(ctx); err != nil {
		return res, err
	}
	if err := c.login(ctx, "admin@System", adminPassword); err != nil {
		return res, err
	}
	var org api.Org
	if err := c.call(ctx, "POST", "/cloudapi/1.0.0/orgs", api.Org{Name: "bench-" + driver}, 201, &org); err != nil {
		return res, err
	}
	var cat api.Catalog
	if err := c.call(ctx, "POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: "vms", Org: &api.Ref{ID: org.ID}}, 201, &cat); err != nil {
		return res, err
	}

	// VDC creates, end to end.
	vdcs := make([]api.VDC, o.vdcs)
	durations := make([]time.Duration, o.vdcs)
	errs := make([]error, o.vdcs)
	sem := make(chan struct{}, o.concurrency)
	var wg sync.WaitGroup
	begin := time.Now()
	for i := range o.vdcs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			t := time.Now()
			errs[i] = c.call(ctx, "POST", "/api/admin/org/"+org.ID+"/vdcs", api.VDC{Name: fmt.Sprintf("vdc-%04d", i),
				ComputeCapacity: api.ComputeCapacity{CPU: api.Capacity{Limit: 2000}, Memory: api.Capacity{Limit: 4096}}}, 201, &vdcs[i])
			durations[i] = time.Since(t)
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	for _, err := range errs {
		if err != nil {
			return res, err
		}
	}
	for _, v := range vdcs {
		if v.Status != "READY" {
			return res, fmt.Errorf("VDC %s: %s", v.Name, v.Status)
		}
	}
	res.VDCCreatesPerSec = float64(o.vdcs) / elapsed.Seconds()
	res.VDCCreate = latencies(durations)

	// Catalog item list with the cache warm.
	var page api.Paged[api.CatalogItem]
	if err := c.call(ctx, "GET", "/cloudapi/1.0.0/catalogs/"+cat.ID+"/catalogItems?pageSize=128", nil, 200, &page); err != nil {
		return res, err
	}
	if page.ResultTotal != o.templates {
		return res, fmt.Errorf("catalog lists %d items, want %d", page.ResultTotal, o.templates)
	}
	durations = durations[:0]
	for i := range o.lists {
		t := time.Now()
		if err := c.call(ctx, "GET", fmt.Sprintf("/cloudapi/1.0.0/catalogs/%s/catalogItems?pageSize=128&page=%d", cat.ID, i%4+1), nil, 200, nil); err != nil {
			return res, err
		}
		durations = append(durations, time.Since(t))
	}
	res.CatalogList = latencies(durations)

	// Instantiation: the TemplateInstance exists when the answer comes; checked for each.
	durations = durations[:0]
	for i := range o.instantiations {
		v := vdcs[i%len(vdcs)]
		var app api.VApp
		t := time.Now()
		if err := c.call(ctx, "POST", "/cloudapi/1.0.0/vdcs/"+v.ID+"/actions/instantiateTemplate", api.InstantiateRequest{
			Name: fmt.Sprintf("app-%04d", i), CatalogItem: api.Ref{ID: page.Values[i%len(page.Values)].ID}, Parameters: map[string]string{"NAME": "vm"},
		}, 202, &app); err != nil {
			return res, err
		}
		durations = append(durations, time.Since(t))
		if _, err := b.dyn.Resource(fixture.TemplateInstances).Namespace(v.Namespace).Get(ctx, kube.InstanceName(strings.TrimPrefix(app.ID, "urn:vcloud:vapp:")), metav1.GetOptions{}); err != nil {
			return res, fmt.Errorf("TemplateInstance of %s: %w", app.ID, err)
		}
	}
	res.Instantiate = latencies(durations)
	res.RSSMiBWarm, err = rssMiB(proc.Process.Pid)
	return res, err
}

func rssMiB(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

type client struct {
	base, token string
	http        http.Client
}

func (c *client) waitReady(ctx context.Context) error {
	return poll.Wait(ctx, 2*time.Minute, "ssvirt-api ready (GET /readyz)", func() (bool, string, error) {
		var r api.Readiness
		err := c.call(ctx, "GET", "/readyz", nil, 200, &r)
		return err == nil && r.Status == "ok", "status " + r.Status, err
	})
}

func (c *client) login(ctx context.Context, user, password string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/cloudapi/1.0.0/sessions", nil)
	req.SetBasicAuth(user, password)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("login: %d", resp.StatusCode)
	}
	c.token = resp.Header.Get(api.HeaderAccessToken)
	return nil
}

func (c *client) call(ctx context.Context, method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d: %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}
