//go:build e2e

package e2e_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
)

// readiness reads /readyz, whose 503 answer is a Readiness too, not an error.
func readiness(t *testing.T, inst *instance) (int, api.Readiness) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, inst.url+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r api.Readiness
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	return resp.StatusCode, r
}

// waitHealthy waits until the shared instance sees both dependencies: another test may just have restarted one.
func waitHealthy(t *testing.T) {
	t.Helper()
	eventually(t, "database and Kubernetes ok", time.Minute, func() (bool, string) {
		code, r := readiness(t, srv)
		return code == http.StatusOK && r.Status == "ok", r.Status
	})
}

// kube-apiserver stopped: /readyz says degraded (still 200); VDC creates, updates and deletes are kept in the
// database and carried out when it is back; the catalog answers from the cache; instantiation is a clear 503.
func TestKubernetesOutage(t *testing.T) {
	ctx := t.Context()
	waitHealthy(t)
	sys := sysadmin(t)
	tn := newTenant(t, sys)
	base := "/api/admin/org/" + tn.org.ID + "/vdcs"
	var keep, gone api.VDC
	sys.must(t, "POST", base, vdcBody("keep", 1000, 1024, 1), http.StatusCreated, &keep)
	sys.must(t, "POST", base, vdcBody("gone", 1000, 1024, 1), http.StatusCreated, &gone)
	var cat api.Catalog
	tn.admin.must(t, "POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: "c"}, http.StatusCreated, &cat)
	var items api.Paged[api.CatalogItem]
	tn.user.must(t, "GET", "/cloudapi/1.0.0/catalogs/"+cat.ID+"/catalogItems", nil, http.StatusOK, &items)

	if err := cluster.StopComponent(devcluster.ComponentAPIServer); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = cluster.StartComponent(ctx, devcluster.ComponentAPIServer)
		}
	}()
	eventually(t, "degraded", 30*time.Second, func() (bool, string) {
		code, r := readiness(t, srv)
		return code == http.StatusOK && r.Status == "degraded" && r.Kubernetes.Status == "unavailable" && r.Database.Status == "ok", r.Status
	})

	var created api.VDC
	sys.must(t, "POST", base, vdcBody("during", 2000, 0, 0), http.StatusCreated, &created)
	if created.Status != store.StatePending {
		t.Errorf("created during the outage: %+v", created)
	}
	sys.must(t, "PUT", base+"/"+keep.ID, vdcBody("keep", 3000, 1024, 1), http.StatusOK, nil)
	sys.must(t, "DELETE", base+"/"+gone.ID, nil, http.StatusAccepted, nil)
	var again api.Paged[api.CatalogItem]
	var ce api.Error
	if code := tn.user.do(t, "GET", "/cloudapi/1.0.0/catalogs/"+cat.ID+"/catalogItems", nil, &ce); code != http.StatusOK {
		t.Errorf("catalog during the outage: %d %+v", code, ce)
	}
	tn.user.do(t, "GET", "/cloudapi/1.0.0/catalogs/"+cat.ID+"/catalogItems", nil, &again)
	if again.ResultTotal != items.ResultTotal {
		t.Errorf("catalog during the outage: %d items, %d before", again.ResultTotal, items.ResultTotal)
	}
	var e api.Error
	if code := tn.user.do(t, "POST", "/cloudapi/1.0.0/vdcs/"+keep.ID+"/actions/instantiateTemplate", api.InstantiateRequest{
		Name: "x", CatalogItem: api.Ref{ID: items.Values[0].ID}, Parameters: map[string]string{"NAME": "x"},
	}, &e); code != http.StatusServiceUnavailable || e.MinorErrorCode != api.CodeUnavailable {
		t.Errorf("instantiation during the outage: %d %+v", code, e)
	}
	tn.user.must(t, "GET", "/cloudapi/1.0.0/vdcs/"+gone.ID, nil, http.StatusForbidden, nil)

	if err := cluster.StartComponent(ctx, devcluster.ComponentAPIServer); err != nil {
		t.Fatal(err)
	}
	restarted = true
	eventually(t, "everything reconciled", 2*time.Minute, func() (bool, string) {
		if code, r := readiness(t, srv); code != http.StatusOK || r.Status != "ok" {
			return false, "not ready: " + r.Status
		}
		var v api.VDC
		sys.must(t, "GET", base+"/"+created.ID, nil, http.StatusOK, &v)
		if v.Status != store.StateReady {
			return false, "created VDC " + v.Status
		}
		if _, err := namespace(ctx, created.Namespace); err != nil {
			return false, "no namespace for the created VDC"
		}
		if !hardIs(quota(t, keep.Namespace), corev1.ResourceLimitsCPU, "3") {
			return false, "update not applied"
		}
		if _, err := namespace(ctx, gone.Namespace); !apierrors.IsNotFound(err) {
			return false, "deleted VDC's namespace still there"
		}
		if _, err := srv.Store.VDCByNamespace(ctx, gone.Namespace); err == nil {
			return false, "deleted VDC's row still there"
		}
		return true, ""
	})
}

// Kubernetes failing in the middle of requests (this instance's probe has not noticed): a create is rolled back
// (503, not listed, a tombstone), an update is compensated (503, the row as it was), a delete is accepted (202)
// and finished by the reconciler; once Kubernetes is back, nothing is left behind and the kept VDC is applied.
func TestKubernetesFailingMidRequest(t *testing.T) {
	ctx := t.Context()
	waitHealthy(t)
	// Its own instance and database, probing and resyncing rarely, so that only the requests themselves meet the
	// outage; when Kubernetes is back, Probe makes it notice (and resync) at once.
	inst, err := startInstance(ctx, store.DriverSQLite, sqlitePath(t), time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.stop()
	sys := login(t, inst, adminUser, "System", adminPass)
	var org api.Org
	sys.must(t, "POST", "/cloudapi/1.0.0/orgs", api.Org{Name: unique("rb")}, http.StatusCreated, &org)
	base := "/api/admin/org/" + org.ID + "/vdcs"
	var keep, gone api.VDC
	sys.must(t, "POST", base, vdcBody("keep", 1000, 0, 0), http.StatusCreated, &keep)
	sys.must(t, "POST", base, vdcBody("gone", 1000, 0, 0), http.StatusCreated, &gone)
	time.Sleep(time.Second) // the reconciles the creates' watch events cause are over

	// A failed request makes the instance see Kubernetes as down, after which it takes the "known down" path:
	// one outage for the update, another for the create and the delete.
	outage := func(requests func()) {
		t.Helper()
		if err := cluster.StopComponent(devcluster.ComponentAPIServer); err != nil {
			t.Fatal(err)
		}
		requests()
		if err := cluster.StartComponent(ctx, devcluster.ComponentAPIServer); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the instance sees Kubernetes again", time.Minute, func() (bool, string) {
			inst.Cluster.Probe(ctx)
			return inst.Cluster.Available(), inst.Cluster.Status()
		})
	}
	var updateErr api.Error
	var updateCode int
	var kept api.VDC
	outage(func() {
		updateCode = sys.do(t, "PUT", base+"/"+keep.ID, vdcBody("keep", 5000, 0, 0), &updateErr)
		sys.do(t, "GET", base+"/"+keep.ID, nil, &kept)
	})
	if updateCode != http.StatusServiceUnavailable || kept.ComputeCapacity.CPU.Limit != 1000 {
		t.Fatalf("update with Kubernetes failing: %d %+v; the VDC now %+v", updateCode, updateErr, kept)
	}
	// The compensated VDC is applied again once Kubernetes is back; let that settle before the next outage.
	eventually(t, "kept VDC ready", time.Minute, func() (bool, string) {
		var v api.VDC
		sys.must(t, "GET", base+"/"+keep.ID, nil, http.StatusOK, &v)
		return v.Status == store.StateReady, v.Status
	})
	time.Sleep(time.Second)
	var createErr api.Error
	var createCode, deleteCode int
	var page api.Paged[api.VDC]
	var tombs []store.Tombstone
	var tombErr error
	outage(func() {
		createCode = sys.do(t, "POST", base, vdcBody("web", 0, 0, 0), &createErr)
		deleteCode = sys.do(t, "DELETE", base+"/"+gone.ID, nil, nil)
		sys.do(t, "GET", base, nil, &page)
		tombs, tombErr = inst.Store.Tombstones(ctx)
	})
	if createCode != http.StatusServiceUnavailable || deleteCode != http.StatusAccepted {
		t.Fatalf("with Kubernetes failing: create %d %+v, delete %d", createCode, createErr, deleteCode)
	}
	if page.ResultTotal != 1 || page.Values[0].ID != keep.ID {
		t.Fatalf("listed while Kubernetes failed: %+v", page.Values)
	}
	if tombErr != nil || len(tombs) != 1 {
		t.Fatalf("tombstones while Kubernetes is away: %+v %v", tombs, tombErr)
	}
	eventually(t, "nothing left behind", time.Minute, func() (bool, string) {
		if _, err := namespace(ctx, tombs[0].Namespace); !apierrors.IsNotFound(err) {
			return false, "rolled-back namespace exists"
		}
		if left, _ := inst.Store.Tombstones(ctx); len(left) != 0 {
			return false, "tombstone kept"
		}
		if _, err := namespace(ctx, gone.Namespace); !apierrors.IsNotFound(err) {
			return false, "deleted VDC's namespace exists"
		}
		if _, err := inst.Store.VDCByNamespace(ctx, gone.Namespace); err == nil {
			return false, "deleted VDC's row exists"
		}
		var v api.VDC
		sys.must(t, "GET", base+"/"+keep.ID, nil, http.StatusOK, &v)
		return v.Status == store.StateReady && hardIs(quota(t, keep.Namespace), corev1.ResourceLimitsCPU, "1"), "kept VDC " + v.Status
	})
}

// PostgreSQL stopped: clear 503s and /readyz down; started again: the same process serves again.
func TestDatabaseOutage(t *testing.T) {
	ctx := t.Context()
	waitHealthy(t)
	sys := sysadmin(t)
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = pg.StartAgain(ctx)
		}
	}()
	var e api.Error
	if code := sys.do(t, "GET", "/cloudapi/1.0.0/orgs", nil, &e); code != http.StatusServiceUnavailable || e.MinorErrorCode != api.CodeUnavailable {
		t.Errorf("list during the database outage: %d %+v", code, e)
	}
	if code := sys.do(t, "POST", "/cloudapi/1.0.0/orgs", api.Org{Name: unique("db")}, &e); code != http.StatusServiceUnavailable {
		t.Errorf("create during the database outage: %d %+v", code, e)
	}
	if code, r := readiness(t, srv); code != http.StatusServiceUnavailable || r.Status != "down" || r.Database.Status != "unavailable" || r.Kubernetes.Status != "ok" {
		t.Errorf("/readyz during the database outage: %d %+v", code, r)
	}
	if err := pg.StartAgain(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	eventually(t, "serving again", time.Minute, func() (bool, string) {
		code, _ := readiness(t, srv)
		return code == http.StatusOK && sys.do(t, "GET", "/cloudapi/1.0.0/orgs", nil, nil) == http.StatusOK, "not yet"
	})
}
