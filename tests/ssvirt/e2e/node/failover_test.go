//go:build node

package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/fixture"
)

// leaseName is the Lease the replicas elect their leader with, in the release namespace.
const leaseName = "ssvirt-api"

// failoverUnderCreates runs two replicas on PostgreSQL behind the chart's Service and deletes the leader's Pod, as a
// node drain or `kubectl delete pod` does, while VDC creates and deletes go through the Service on new connections.
// The other replica must lead within 5 seconds; every client gets an answer; every VDC answered 201 is in the
// database with its namespace, every other name is not; every deletion task, some started on the deleted replica,
// is followed through the Service to its end.
func failoverUnderCreates(t *testing.T, release *nodetier.Installed, values map[string]any, dsn string) {
	t.Helper()
	ctx := context.Background()
	release.Upgrade(t, "two replicas", nodetier.Merge(values, map[string]any{"replicaCount": 2}))
	waitRolledOut(t)
	token := adminToken(t)
	base := apiURL(t)
	var org api.Org
	if code := call(t, "POST", base+"/cloudapi/1.0.0/orgs", token, api.Org{Name: fmt.Sprintf("failover%d", time.Now().UnixNano()%1e6)}, &org); code != http.StatusCreated {
		t.Fatalf("create org: %d", code)
	}
	vdcs := base + "/api/admin/org/" + org.ID + "/vdcs"
	doomed := make([]api.VDC, 5)
	for i := range doomed {
		if code := call(t, "POST", vdcs, token, vdcBody(fmt.Sprintf("doomed%d", i)), &doomed[i]); code != http.StatusCreated {
			t.Fatalf("create VDC doomed%d: %d", i, code)
		}
	}

	leaderPod := leaseHolderPod(ctx)
	pods := apiPodNames(t)
	if len(pods) != 2 || !pods[leaderPod] {
		t.Fatalf("leader %q among the API Pods %v: want one of two", leaderPod, pods)
	}

	type outcome struct {
		name   string
		status int // 0: no answer
		id     string
		task   string
	}
	// Creates run on 8 connections at a time from before the Pod's deletion until 3 seconds after the other replica
	// leads; the deletions start as the Pod is deleted, so that the leader that is going starts some of their tasks.
	var mu sync.Mutex
	var creates []outcome
	deletes := make([]outcome, len(doomed))
	var answered atomic.Int32
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				o := outcome{name: fmt.Sprintf("c%d-%03d", w, i)}
				var v api.VDC
				o.status, _ = send(ctx, "POST", vdcs, token, vdcBody(o.name), &v)
				o.id = v.ID
				answered.Add(1)
				mu.Lock()
				creates = append(creates, o)
				mu.Unlock()
			}
		})
	}
	// Every 10 ms: the Pod is deleted as soon as 10 creates have answered.
	if err := poll.WaitEvery(ctx, time.Minute, 10*time.Millisecond, "10 creates answered", func() (bool, string, error) {
		n := answered.Load()
		return n >= 10, fmt.Sprintf("%d answered", n), nil
	}); err != nil {
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	deletedAt := time.Now()
	if err := node.Kube.CoreV1().Pods(nodeChart).Delete(ctx, leaderPod, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the leader's Pod: %v", err)
	}
	for i, victim := range doomed {
		d := &deletes[i]
		d.name = victim.Name
		wg.Go(func() {
			var h http.Header
			d.status, h = send(ctx, "DELETE", vdcs+"/"+victim.ID, token, nil, nil)
			d.task = h.Get("Location")
		})
	}
	// Every 50 ms: this times the failover. Past a minute the test goes on and fails on the failover's time.
	_ = poll.WaitEvery(ctx, time.Minute, 50*time.Millisecond, "another replica holding the Lease", func() (bool, string, error) {
		p := leaseHolderPod(ctx)
		return p != "" && p != leaderPod, "holder " + p, nil
	})
	takeover := time.Since(deletedAt)
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	span := time.Since(deletedAt)
	t.Logf("the other replica held the Lease %s after the leader's Pod was deleted", takeover.Round(10*time.Millisecond))
	if takeover > 5*time.Second {
		t.Errorf("failover took %s, want at most 5s", takeover.Round(10*time.Millisecond))
	}

	for _, d := range deletes {
		if d.status != http.StatusAccepted || d.task == "" {
			t.Errorf("delete %s: %d, task %q; want 202 and a task", d.name, d.status, d.task)
			continue
		}
		u, err := url.Parse(d.task)
		if err != nil {
			t.Fatal(err)
		}
		poll.Until(t, 2*time.Minute, "the task deleting "+d.name+", followed through the Service", func() (bool, string, error) {
			var task api.Task
			code, _ := send(ctx, "GET", base+u.Path, token, nil, &task)
			return code == http.StatusOK && task.Status == "success", fmt.Sprintf("%d %s", code, task.Status), nil
		})
	}

	st, err := store.Open(ctx, store.DriverPostgres, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	orgID := strings.TrimPrefix(org.ID, "urn:vcloud:org:")
	rows, _, err := st.ListVDCs(ctx, store.Scope{OrgID: orgID}, "", store.Query{Page: store.Page{PageSize: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]store.VDC{}
	for _, v := range rows {
		byName[v.Name] = append(byName[v.Name], v)
	}
	var created int
	for _, o := range creates {
		got := byName[o.name]
		switch {
		case o.status == http.StatusCreated && (len(got) != 1 || "urn:vcloud:vdc:"+got[0].ID != o.id):
			t.Errorf("VDC %s answered 201 as %s; the database has %+v", o.name, o.id, got)
		case o.status == http.StatusCreated:
			created++
		case len(got) != 0:
			t.Errorf("VDC %s answered %d, yet the database has it: %+v", o.name, o.status, got)
		default:
			t.Errorf("VDC %s answered %d (0: no answer) while a replica went away", o.name, o.status)
		}
	}
	for _, d := range doomed {
		if len(byName[d.Name]) != 0 {
			t.Errorf("VDC %s is still in the database after its deletion task succeeded", d.Name)
		}
	}
	// Kubernetes agrees: one namespace per VDC of the organization, none left over.
	poll.Until(t, time.Minute, "the organization's namespaces are its VDCs'", func() (bool, string, error) {
		list, err := node.Kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kube.LabelOrgID + "=" + orgID})
		if err != nil {
			return false, "", err
		}
		want := map[string]bool{}
		for _, v := range rows {
			want[v.Namespace] = true
		}
		var extra, missing []string
		for _, ns := range list.Items {
			if !want[ns.Name] && ns.DeletionTimestamp == nil {
				extra = append(extra, ns.Name)
			}
			delete(want, ns.Name)
		}
		for ns := range want {
			missing = append(missing, ns)
		}
		return len(extra) == 0 && len(missing) == 0, fmt.Sprintf("without a VDC %v, missing %v", extra, missing), nil
	})
	t.Logf("%d of %d creates and %d deletions through the Service in the %s after the leader's Pod was deleted and before: all answered, all in the database",
		created, len(creates), len(deletes), span.Round(100*time.Millisecond))
}

func vdcBody(name string) api.VDC {
	return api.VDC{Name: name, ComputeCapacity: api.ComputeCapacity{CPU: api.Capacity{Limit: 100}, Memory: api.Capacity{Limit: 64}}}
}

// leaseHolderPod is the Pod that holds the leader Lease ("" for none): controller-runtime names a holder by its host
// name, which in a Pod is the Pod's name, and a random suffix.
func leaseHolderPod(ctx context.Context) string {
	l, err := node.Kube.CoordinationV1().Leases(nodeChart).Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	pod, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
	return pod
}

func apiPodNames(t *testing.T) map[string]bool {
	t.Helper()
	pods, err := node.Kube.CoreV1().Pods(nodeChart).List(context.Background(), metav1.ListOptions{LabelSelector: apiPods})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range pods.Items {
		names[p.Name] = true
	}
	return names
}

// send is one request on a new connection (as clients arriving through the Service do); status 0 is no answer.
func send(ctx context.Context, method, url, token string, body, out any) (int, http.Header) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// A new connection each time: one held open would stay on the replica being deleted.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	status, header, data, err := fixture.Call(ctx, hc, method, url, token, nil, body)
	if err != nil {
		return 0, http.Header{}
	}
	if out != nil && status < 300 {
		_ = json.Unmarshal(data, out)
	}
	return status, header
}
