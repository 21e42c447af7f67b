//go:build e2e

package e2e_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
)

// TestTasks: instantiation and VDC deletion answer 202 with Location: a task polled as the SDK polls it. The task
// runs until Kubernetes says the operation ended: success once the TemplateInstance is Ready, an error with the
// template controller's message once it failed, success for a VDC only once its namespace is gone. Another
// organization's task answers as a missing one.
func TestTasks(t *testing.T) {
	ctx := t.Context()
	sys := sysadmin(t)
	tn, other := newTenant(t, sys), newTenant(t, sys)
	var vdc api.VDC
	sys.must(t, "POST", "/api/admin/org/"+tn.org.ID+"/vdcs", vdcBody("tasks", 0, 0, 0), http.StatusCreated, &vdc)
	var cat api.Catalog
	tn.admin.must(t, "POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: "vms"}, http.StatusCreated, &cat)
	var items api.Paged[api.CatalogItem]
	tn.user.must(t, "GET", "/cloudapi/1.0.0/catalogs/"+cat.ID+"/catalogItems?filter=templateName==fedora", nil, http.StatusOK, &items)
	instantiate := func(name string) (api.VApp, string) {
		t.Helper()
		var app api.VApp
		status, h := tn.user.doH(t, "POST", "/cloudapi/1.0.0/vdcs/"+vdc.ID+"/actions/instantiateTemplate", api.InstantiateRequest{
			Name: name, CatalogItem: api.Ref{ID: items.Values[0].ID}, Parameters: map[string]string{"NAME": name},
		}, &app)
		loc := h.Get("Location")
		if status != http.StatusAccepted || !strings.HasPrefix(loc, srv.url+"/api/task/") {
			t.Fatalf("instantiate %s: %d, Location %q", name, status, loc)
		}
		return app, loc
	}

	ok, okTask := instantiate("ok")
	task, _ := tn.user.task(t, okTask)
	if task.Status != "running" || task.Owner.ID != ok.ID || task.ID == "" || task.HREF != okTask {
		t.Errorf("a new instantiation's task: %+v", task)
	}
	// Still running a while later: nothing has made the TemplateInstance Ready.
	time.Sleep(time.Second)
	if task, _ = tn.user.task(t, okTask); task.Status != "running" {
		t.Errorf("the task ended before the TemplateInstance did: %+v", task)
	}
	ti, err := templateInstance(ctx, vdc.Namespace, ok.ID)
	if err != nil {
		t.Fatal(err)
	}
	setCondition(t, ti, "Ready", "all objects created")
	if task = tn.user.waitTask(t, okTask, 30*time.Second); task.Status != "success" || task.Error != nil || task.EndTime == "" {
		t.Errorf("after Ready: %+v", task)
	}

	bad, badTask := instantiate("bad")
	ti, err = templateInstance(ctx, vdc.Namespace, bad.ID)
	if err != nil {
		t.Fatal(err)
	}
	setCondition(t, ti, "InstantiateFailure", "quota exceeded: requests.cpu")
	task = tn.user.waitTask(t, badTask, 30*time.Second)
	if task.Status != "error" || task.Error == nil || task.Error.Message != "quota exceeded: requests.cpu" {
		t.Errorf("after InstantiateFailure: %+v (error %+v)", task, task.Error)
	}

	// Another organization's task answers exactly as a task that does not exist.
	_, foreign := other.admin.task(t, okTask)
	_, missing := other.admin.task(t, srv.url+"/api/task/"+uuid.NewString())
	if foreign != http.StatusForbidden || missing != http.StatusForbidden {
		t.Errorf("another organization's task: %d, a missing task: %d; want 403 for both", foreign, missing)
	}

	// A vApp deleted while it instantiates ends its task with an error.
	gone, goneTask := instantiate("gone")
	tn.user.must(t, "DELETE", "/cloudapi/1.0.0/vapps/"+gone.ID, nil, http.StatusNoContent, nil)
	if task, _ = tn.user.task(t, goneTask); task.Status != "error" {
		t.Errorf("the task of a vApp deleted while instantiating: %+v", task)
	}
	for _, a := range []api.VApp{ok, bad} {
		tn.user.must(t, "DELETE", "/cloudapi/1.0.0/vapps/"+a.ID, nil, http.StatusNoContent, nil)
	}

	// VDC deletion: the namespace terminates (the namespace controller empties it first), so 202 and a task that
	// succeeds only when the namespace is gone.
	status, h := sys.doH(t, "DELETE", "/api/admin/org/"+tn.org.ID+"/vdcs/"+vdc.ID, nil, nil)
	loc := h.Get("Location")
	if status != http.StatusAccepted || loc == "" {
		t.Fatalf("VDC delete: %d, Location %q", status, loc)
	}
	task = sys.waitTask(t, loc, 2*time.Minute)
	if task.Status != "success" || task.Owner.ID != vdc.ID {
		t.Errorf("VDC delete task: %+v", task)
	}
	if _, err := namespace(ctx, vdc.Namespace); !apierrors.IsNotFound(err) {
		t.Errorf("the VDC delete task succeeded while namespace %s is still there: %v", vdc.Namespace, err)
	}
}
