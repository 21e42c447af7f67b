//go:build e2e

package e2e_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/fixture"
)

// outcome is what a client saw of one operation.
type outcome struct {
	kind, name string
	via        *replica
	// status is 0 when the client saw no answer (the connection was refused or cut).
	status int
	id     string
	task   string
}

// Two replicas on one PostgreSQL database, elected by a Lease; the leader is killed (SIGKILL) in the middle of
// 100 concurrent VDC creates and instantiations spread over both. Every operation either succeeded, and its
// object exists once, in the database and in Kubernetes, or its client saw an error; no namespace is left without
// a VDC, no name is taken twice, and every task ends, also those the killed replica started or left half done.
// Sessions issued by one replica are accepted by the other, and a logout on one is refused on the other.
func TestReplicasOneKilledUnderLoad(t *testing.T) {
	ctx := t.Context()
	dsn, err := pg.CreateDatabase(ctx, "replicas")
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, store.DriverPostgres, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rs := newReplicaSet(t, dsn)
	a := rs.start(t, "replica-a")
	eventually(t, "replica-a leads", time.Minute, func() (bool, string) { return leader(ctx) != "", "no Lease holder" })
	killedLeader := leader(ctx)
	b := rs.start(t, "replica-b")

	sysA := login(t, a.asInstance(), adminUser, "System", adminPass)
	sysB := &client{base: b.url, token: sysA.token}
	sysB.must(t, "GET", "/cloudapi/1.0.0/sessions/current", nil, http.StatusOK, nil)
	out := login(t, b.asInstance(), adminUser, "System", adminPass)
	out.must(t, "DELETE", "/cloudapi/1.0.0/sessions/current", nil, http.StatusNoContent, nil)
	if got := (&client{base: a.url, token: out.token}).do(t, "GET", "/cloudapi/1.0.0/orgs", nil, nil); got != http.StatusUnauthorized {
		t.Errorf("a session logged out on replica-b answers %d on replica-a, want 401", got)
	}

	var org api.Org
	sysA.must(t, "POST", "/cloudapi/1.0.0/orgs", api.Org{Name: unique("replicas")}, http.StatusCreated, &org)
	orgID := strings.TrimPrefix(org.ID, "urn:vcloud:org:")
	sysA.must(t, "POST", "/cloudapi/1.0.0/users", userBody("boss", "password-boss", "Organization Administrator", org.ID), http.StatusCreated, nil)
	// A password changed through replica-b ends the account's session on replica-a at once.
	var temp api.User
	sysA.must(t, "POST", "/cloudapi/1.0.0/users", userBody("temp", "password-temp", "vApp User", org.ID), http.StatusCreated, &temp)
	tempA := login(t, a.asInstance(), "temp", org.Name, "password-temp")
	tempA.must(t, "GET", "/cloudapi/1.0.0/vapps", nil, http.StatusOK, nil)
	temp.Password = "password-temp-2"
	sysB.must(t, "PUT", "/cloudapi/1.0.0/users/"+temp.ID, temp, http.StatusOK, nil)
	if got := tempA.do(t, "GET", "/cloudapi/1.0.0/vapps", nil, nil); got != http.StatusUnauthorized {
		t.Errorf("a session on replica-a after its password changed on replica-b: %d, want 401", got)
	}
	bossA := login(t, a.asInstance(), "boss", org.Name, "password-boss")
	bossB := &client{base: b.url, token: bossA.token}
	var cat api.Catalog
	bossA.must(t, "POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: "vms"}, http.StatusCreated, &cat)
	var items api.Paged[api.CatalogItem]
	bossA.must(t, "GET", "/cloudapi/1.0.0/catalogs/"+cat.ID+"/catalogItems", nil, http.StatusOK, &items)
	var itemID string
	for _, it := range items.Values {
		if it.TemplateName == "fedora" {
			itemID = it.ID
		}
	}
	base := "/api/admin/org/" + org.ID + "/vdcs"
	homes := make([]api.VDC, 5)
	for i := range homes {
		sysA.must(t, "POST", base, vdcBody(fmt.Sprintf("home%d", i), 4000, 8192, 0), http.StatusCreated, &homes[i])
	}

	// The template controller, played: every TemplateInstance of the organization becomes Ready.
	playCtx, stopPlaying := context.WithCancel(ctx)
	defer stopPlaying()
	go playTemplateController(playCtx, orgID)

	// 100 operations, alternating between the replicas; replica-a, the leader, is killed once 30 have answered.
	ops := make([]outcome, 100)
	for i := range ops {
		ops[i] = outcome{kind: "vdc", name: fmt.Sprintf("v%02d", i/2), via: a}
		if i%2 == 1 {
			ops[i] = outcome{kind: "vapp", name: fmt.Sprintf("app%02d", i/2), via: a}
		}
		if i%4 >= 2 {
			ops[i].via = b
		}
	}
	var answered atomic.Int32
	killed := make(chan struct{})
	// takeover is how long after the leader's death the survivor holds the Lease.
	var takeover time.Duration
	var killErr error
	go func() {
		defer close(killed)
		// Every 10 ms: the leader is killed as soon as 30 have answered.
		if killErr = poll.WaitEvery(ctx, time.Minute, 10*time.Millisecond, "30 operations answered", func() (bool, string, error) {
			n := answered.Load()
			return n >= 30, fmt.Sprintf("%d answered", n), nil
		}); killErr != nil {
			return
		}
		a.kill()
		died := time.Now()
		// Every 50 ms: this times the failover. Past a minute the test goes on and fails on the failover's time.
		_ = poll.WaitEvery(ctx, time.Minute, 50*time.Millisecond, "replica-b leading", func() (bool, string, error) {
			l := leader(ctx)
			return l != "" && l != killedLeader, "holder " + l, nil
		})
		takeover = time.Since(died)
	}()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range ops {
		o := &ops[i]
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if o.kind == "vdc" {
				var v api.VDC
				o.status, _ = post(ctx, o.via.url+base, sysA.token, vdcBody(o.name, 100, 64, 0), &v)
				o.id = v.ID
			} else {
				var app api.VApp
				home := homes[i/2%len(homes)]
				var h http.Header
				o.status, h = post(ctx, o.via.url+"/cloudapi/1.0.0/vdcs/"+home.ID+"/actions/instantiateTemplate", bossA.token,
					api.InstantiateRequest{Name: o.name, CatalogItem: api.Ref{ID: itemID}, Parameters: map[string]string{"NAME": o.name}}, &app)
				o.id, o.task = app.ID, h.Get("Location")
			}
			answered.Add(1)
		})
	}
	wg.Wait()
	<-killed
	if killErr != nil {
		t.Fatal(killErr)
	}
	t.Logf("replica-b took the Lease over %s after replica-a was killed", takeover.Round(10*time.Millisecond))
	if takeover > 5*time.Second {
		t.Errorf("failover took %s, want at most 5s", takeover.Round(10*time.Millisecond))
	}
	summary := map[string]int{}
	for _, o := range ops {
		summary[fmt.Sprintf("%s via %s: %d", o.kind, o.via.name, o.status)]++
	}
	t.Logf("outcomes: %v", summary)

	// What replica-a leaves when it is killed between two writes, written as it would have: a vApp's row and task
	// without its TemplateInstance, and a VDC marked for deletion with its task, its namespace untouched.
	left, err := st.CreateVApp(ctx, store.VApp{OrgID: orgID, VDCID: strings.TrimPrefix(homes[0].ID, "urn:vcloud:vdc:"),
		Name: "left", Namespace: homes[0].Namespace, TemplateName: "fedora"})
	if err != nil {
		t.Fatal(err)
	}
	leftTask, err := st.CreateTask(ctx, store.Task{OrgID: orgID, Operation: store.OpInstantiate, OwnerKind: "vapp",
		OwnerID: left.ID, OwnerName: left.Name, UserID: "u", UserName: "boss", Message: "instantiate left"})
	if err != nil {
		t.Fatal(err)
	}
	var doomed api.VDC
	sysB.must(t, "POST", base, vdcBody("doomed", 100, 64, 0), http.StatusCreated, &doomed)
	doomedID := strings.TrimPrefix(doomed.ID, "urn:vcloud:vdc:")
	if err := st.MarkVDCDeleting(ctx, store.Scope{}, doomedID); err != nil {
		t.Fatal(err)
	}
	doomedTask, err := st.CreateTask(ctx, store.Task{OrgID: orgID, Operation: store.OpDeleteVDC, OwnerKind: "vdc",
		OwnerID: doomedID, OwnerName: "doomed", UserID: "u", UserName: "admin", Message: "delete doomed"})
	if err != nil {
		t.Fatal(err)
	}

	eventually(t, "replica-b leads", time.Minute, func() (bool, string) {
		l := leader(ctx)
		return l != "" && l != killedLeader, "holder " + l
	})
	// Every task of the organization ends: those replica-a started and those it left.
	eventually(t, "no task left running", 2*time.Minute, func() (bool, string) {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM tasks WHERE org_id = $1 AND status = 'running'", orgID).Scan(&n); err != nil {
			return false, err.Error()
		}
		return n == 0, fmt.Sprintf("%d running", n)
	})
	if got, _ := st.GetTask(ctx, store.Scope{}, leftTask.ID); got.Status != store.TaskError || got.Message != kube.AbandonedMessage {
		t.Errorf("the task of a vApp left without its TemplateInstance: %+v", got)
	}
	if _, err := st.GetVApp(ctx, store.Scope{}, left.ID); err == nil {
		t.Error("a vApp left without its TemplateInstance is still there")
	}
	if got, _ := st.GetTask(ctx, store.Scope{}, doomedTask.ID); got.Status != store.TaskSuccess {
		t.Errorf("the task of a VDC left being deleted: %+v", got)
	}
	if _, err := namespace(ctx, doomed.Namespace); !apierrors.IsNotFound(err) {
		t.Errorf("the namespace of a VDC left being deleted: %v", err)
	}

	// The database and Kubernetes agree: every VDC is READY with its namespace, every namespace labelled with the
	// organization has its VDC, every vApp is DEPLOYED with its TemplateInstance and every TemplateInstance has its
	// vApp; no name and no namespace twice.
	eventually(t, "database and Kubernetes agree", time.Minute, func() (bool, string) {
		return agree(ctx, st, orgID)
	})
	vdcs, _, err := st.ListVDCs(ctx, store.Scope{OrgID: orgID}, "", store.Query{Page: store.Page{PageSize: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	apps, _, err := st.ListVApps(ctx, store.Scope{OrgID: orgID}, "", store.Query{Page: store.Page{PageSize: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, v := range vdcs {
		rows["urn:vcloud:vdc:"+v.ID] = true
	}
	for _, app := range apps {
		rows["urn:vcloud:vapp:"+app.ID] = true
	}
	names := map[string]bool{}
	for _, v := range vdcs {
		names[v.Name] = true
	}
	for _, app := range apps {
		names[app.Name] = true
	}
	var failed, finished int
	for _, o := range ops {
		if o.status == 0 && names[o.name] {
			finished++ // in flight when its replica was killed: carried out all the same
		}
		switch o.status {
		case http.StatusCreated, http.StatusAccepted:
			if !rows[o.id] {
				t.Errorf("%s %s via %s answered %d, but %s is not in the database", o.kind, o.name, o.via.name, o.status, o.id)
			}
			if o.task != "" {
				task, _ := bossB.task(t, b.url+mustPath(t, o.task))
				if task.Status != "success" {
					t.Errorf("%s %s: task %s", o.kind, o.name, task.Status)
				}
			}
		default:
			failed++
		}
	}
	t.Logf("%d of %d operations failed with an error their client saw (%d of them carried out all the same); %d VDCs and %d vApps exist",
		failed, len(ops), finished, len(vdcs), len(apps))
	if failed == len(ops) || failed == 0 {
		t.Errorf("%d failed: the kill did not happen under load", failed)
	}
}

// post sends body as JSON and decodes a 2xx answer into out; status 0 is no answer.
func post(ctx context.Context, url, token string, body, out any) (int, http.Header) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	status, header, data, err := fixture.Call(ctx, http.DefaultClient, http.MethodPost, url, token, nil, body)
	if err != nil {
		return 0, http.Header{}
	}
	if status < 300 {
		_ = json.Unmarshal(data, out)
	}
	return status, header
}

func mustPath(t *testing.T, href string) string {
	t.Helper()
	u, err := url.Parse(href)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// playTemplateController sets Ready on every TemplateInstance of the organization that has no condition yet.
func playTemplateController(ctx context.Context, orgID string) {
	for ctx.Err() == nil {
		list, err := dyn.Resource(fixture.TemplateInstances).Namespace("").List(ctx, metav1.ListOptions{LabelSelector: kube.LabelOrgID + "=" + orgID})
		if err == nil {
			for _, ti := range list.Items {
				if status, _ := kube.VAppStatus(&ti); status != store.VAppInstantiating {
					continue
				}
				ready := ti.DeepCopy()
				ready.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "message": "played"}}}
				_, _ = dyn.Resource(fixture.TemplateInstances).Namespace(ti.GetNamespace()).UpdateStatus(ctx, ready, metav1.UpdateOptions{})
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// agree says whether the organization's rows and its Kubernetes objects match one for one.
func agree(ctx context.Context, st *store.Store, orgID string) (bool, string) {
	all, err := st.AllVDCs(ctx)
	if err != nil {
		return false, err.Error()
	}
	byNamespace := map[string]store.VDC{}
	names := map[string]bool{}
	for _, v := range all {
		if v.OrgID != orgID {
			continue
		}
		if v.State != store.StateReady {
			return false, "VDC " + v.Name + " is " + v.State
		}
		if names[v.Name] || byNamespace[v.Namespace].ID != "" {
			return false, "VDC " + v.Name + " twice"
		}
		names[v.Name], byNamespace[v.Namespace] = true, v
		if _, err := namespace(ctx, v.Namespace); err != nil {
			return false, "namespace of " + v.Name + ": " + err.Error()
		}
	}
	nss, err := kubeCS.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kube.LabelOrgID + "=" + orgID})
	if err != nil {
		return false, err.Error()
	}
	for _, ns := range nss.Items {
		if byNamespace[ns.Name].ID != ns.Labels[kube.LabelVDCID] {
			return false, "namespace " + ns.Name + " has no VDC (orphan)"
		}
	}
	apps, _, err := st.ListVApps(ctx, store.Scope{OrgID: orgID}, "", store.Query{Page: store.Page{PageSize: 1000}})
	if err != nil {
		return false, err.Error()
	}
	rows := map[string]bool{}
	for _, app := range apps {
		if app.Status != store.VAppDeployed {
			return false, "vApp " + app.Name + " is " + app.Status
		}
		rows[app.ID] = true
	}
	tis, err := dyn.Resource(fixture.TemplateInstances).Namespace("").List(ctx, metav1.ListOptions{LabelSelector: kube.LabelOrgID + "=" + orgID})
	if err != nil {
		return false, err.Error()
	}
	for _, ti := range tis.Items {
		if !rows[ti.GetLabels()[kube.LabelVAppID]] {
			return false, "TemplateInstance " + ti.GetNamespace() + "/" + ti.GetName() + " has no vApp"
		}
	}
	if len(tis.Items) != len(apps) {
		return false, fmt.Sprintf("%d TemplateInstances, %d vApps", len(tis.Items), len(apps))
	}
	return true, ""
}
