//go:build e2e

package e2e_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/fixture"
)

// A vApp's VMs are the VirtualMachines its TemplateInstance lists as made; they are read per vApp, in the list of
// all VMs and by id, and a VM merely labelled as the instance's is none of them.
func TestVMsListed(t *testing.T) {
	sys := sysadmin(t)
	tn := newTenant(t, sys)
	var vdc api.VDC
	sys.must(t, "POST", "/api/admin/org/"+tn.org.ID+"/vdcs", vdcBody("vms", 0, 0, 0), http.StatusCreated, &vdc)
	var cat api.Catalog
	tn.admin.must(t, "POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: "vms"}, http.StatusCreated, &cat)
	app, vms := deployedVApp(t, tn.user, vdc, cat.ID, "web", "web-0", "web-1")
	if vmNames(vms) != "web-0,web-1" {
		t.Fatalf("VMs: %+v", vms)
	}
	for _, v := range vms {
		k := virtualMachine(t, vdc.Namespace, v.Name)
		if v.ID != "urn:vcloud:vm:"+string(k.GetUID()) || v.VApp.ID != app.ID || v.VDC.ID != vdc.ID || v.Org.ID != tn.org.ID ||
			v.Namespace != vdc.Namespace || v.PrintableStatus != "Running" || v.RunStrategy != "Always" {
			t.Errorf("VM %s: %+v", v.Name, v)
		}
		if got := tn.user.getVM(t, v.ID); got != v {
			t.Errorf("VM by id: %+v, listed %+v", got, v)
		}
	}
	var all api.Paged[api.VM]
	tn.user.must(t, "GET", "/cloudapi/1.0.0/vms?filter=vapp.id=="+app.ID+"&sortDesc=name", nil, http.StatusOK, &all)
	if all.ResultTotal != 2 || vmNames(all.Values) != "web-1,web-0" {
		t.Errorf("all VMs of the vApp, by name descending: %+v", all)
	}
	tn.user.must(t, "GET", "/cloudapi/1.0.0/vms?filter=namespace=="+vdc.Namespace, nil, http.StatusBadRequest, nil)

	// A VM carrying the instance's label but not in its status.objects is not the vApp's: nothing names it.
	ti, err := templateInstance(t.Context(), vdc.Namespace, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	stray := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": "stray", "namespace": vdc.Namespace,
			"labels": map[string]any{fixture.LabelTemplateInstanceOwner: string(ti.GetUID())}},
		"spec": map[string]any{"runStrategy": "Always"},
	}}
	stray, err = dyn.Resource(fixture.VirtualMachines).Namespace(vdc.Namespace).Create(t.Context(), stray, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the cache has seen it
	tn.user.must(t, "GET", "/cloudapi/1.0.0/vms/urn:vcloud:vm:"+string(stray.GetUID()), nil, http.StatusForbidden, nil)
	if st, _ := tn.user.powerAction(t, "urn:vcloud:vm:"+string(stray.GetUID()), "powerOff"); st != http.StatusForbidden {
		t.Errorf("power off of a VM no vApp lists: %d", st)
	}
	tn.user.must(t, "GET", "/cloudapi/1.0.0/vms?filter=vapp.id=="+app.ID, nil, http.StatusOK, &all)
	if all.ResultTotal != 2 {
		t.Errorf("a stray VM is listed: %+v", all.Values)
	}
	if s, _, _ := unstructured.NestedString(virtualMachine(t, vdc.Namespace, "stray").Object, "spec", "runStrategy"); s != "Always" {
		t.Errorf("the stray VM was changed: %s", s)
	}
}

// Power off, on and reset are tasks that end when the VM's status says so: while KubeVirt has not reported the
// VM stopped, the power off task runs (and the VM is listed as still on); a reset halts and starts the VM; a later
// action ends an earlier one in error; a VM whose status never comes ends its task in error at the deadline.
func TestVMPower(t *testing.T) {
	sys := sysadmin(t)
	tn := newTenant(t, sys)
	var vdc api.VDC
	sys.must(t, "POST", "/api/admin/org/"+tn.org.ID+"/vdcs", vdcBody("power", 0, 0, 0), http.StatusCreated, &vdc)
	var cat api.Catalog
	tn.admin.must(t, "POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: "vms"}, http.StatusCreated, &cat)
	_, vms := deployedVApp(t, tn.user, vdc, cat.ID, "app", "app-0", "app-1")
	vm0, vm1 := vms[0], vms[1]

	// Power off with KubeVirt's status lagging.
	kubevirt.Hold(vdc.Namespace, vm0.Name)
	status, loc := tn.user.powerAction(t, vm0.ID, "powerOff")
	if status != http.StatusAccepted || !strings.HasPrefix(loc, srv.url+"/api/task/") {
		t.Fatalf("power off: %d, Location %q", status, loc)
	}
	k := virtualMachine(t, vdc.Namespace, vm0.Name)
	if s, _, _ := unstructured.NestedString(k.Object, "spec", "runStrategy"); s != "Halted" {
		t.Errorf("run strategy after power off: %q", s)
	}
	if _, has, _ := unstructured.NestedFieldNoCopy(k.Object, "spec", "running"); has {
		t.Error("spec.running is still set beside spec.runStrategy")
	}
	time.Sleep(1500 * time.Millisecond)
	if task, _ := tn.user.task(t, loc); task.Status != "running" || task.OperationName != "vmPowerOff" || task.Owner.ID != vm0.ID {
		t.Errorf("the power off task while the VM still reports Running: %+v", task)
	}
	if v := tn.user.getVM(t, vm0.ID); v.Status != "POWERED_ON" || v.RunStrategy != "Halted" {
		t.Errorf("VM while its status lags: %+v", v)
	}
	kubevirt.Release(vdc.Namespace, vm0.Name)
	if task := tn.user.waitTask(t, loc, 30*time.Second); task.Status != "success" {
		t.Fatalf("power off task: %+v", task)
	}
	if v := tn.user.getVM(t, vm0.ID); v.Status != "POWERED_OFF" || v.Ready {
		t.Errorf("VM after power off: %+v", v)
	}

	// Power on: succeeds only once Running and ready (the played KubeVirt passes through Starting, not ready).
	status, loc = tn.user.powerAction(t, vm0.ID, "powerOn")
	if status != http.StatusAccepted {
		t.Fatalf("power on: %d", status)
	}
	if task := tn.user.waitTask(t, loc, 30*time.Second); task.Status != "success" {
		t.Fatalf("power on task: %+v", task)
	}
	if v := tn.user.getVM(t, vm0.ID); v.Status != "POWERED_ON" || !v.Ready || v.RunStrategy != "Always" {
		t.Errorf("VM after power on: %+v", v)
	}
	// Powering on a running VM changes nothing; its task ends at once.
	if _, loc = tn.user.powerAction(t, vm0.ID, "powerOn"); tn.user.waitTask(t, loc, 5*time.Second).Status != "success" {
		t.Error("power on of a running VM did not succeed")
	}

	// Reset: halted, then started: two generations written, Running and ready at the end.
	before := virtualMachine(t, vdc.Namespace, vm1.Name).GetGeneration()
	status, loc = tn.user.powerAction(t, vm1.ID, "reset")
	if status != http.StatusAccepted {
		t.Fatalf("reset: %d", status)
	}
	if task := tn.user.waitTask(t, loc, 30*time.Second); task.Status != "success" {
		t.Fatalf("reset task: %+v", task)
	}
	k = virtualMachine(t, vdc.Namespace, vm1.Name)
	if k.GetGeneration() != before+2 {
		t.Errorf("reset wrote generations %d..%d, want a halt and a start", before, k.GetGeneration())
	}
	if v := tn.user.getVM(t, vm1.ID); v.Status != "POWERED_ON" || !v.Ready || v.RunStrategy != "Always" {
		t.Errorf("VM after reset: %+v", v)
	}

	// A later action ends the running one in error.
	kubevirt.Hold(vdc.Namespace, vm1.Name)
	_, offLoc := tn.user.powerAction(t, vm1.ID, "powerOff")
	_, onLoc := tn.user.powerAction(t, vm1.ID, "powerOn")
	if task, _ := tn.user.task(t, offLoc); task.Status != "error" || !strings.Contains(task.Details, "superseded") {
		t.Errorf("the power off after a power on: %+v", task)
	}
	kubevirt.Release(vdc.Namespace, vm1.Name)
	if task := tn.user.waitTask(t, onLoc, 30*time.Second); task.Status != "success" {
		t.Errorf("the later power on: %+v", task)
	}

	// KubeVirt never reports: the task runs until its deadline, then ends in error saying what the VM reports.
	kubevirt.Hold(vdc.Namespace, vm0.Name)
	defer kubevirt.Release(vdc.Namespace, vm0.Name)
	start := time.Now()
	_, loc = tn.user.powerAction(t, vm0.ID, "powerOff")
	time.Sleep(powerTimeout / 2)
	if task, _ := tn.user.task(t, loc); task.Status != "running" {
		t.Errorf("the task ended before its deadline: %+v", task)
	}
	task := tn.user.waitTask(t, loc, powerTimeout+10*time.Second)
	if task.Status != "error" || task.Error == nil || !strings.Contains(task.Error.Message, "did not end within") ||
		!strings.Contains(task.Error.Message, `"Running"`) || time.Since(start) < powerTimeout {
		t.Errorf("a power off KubeVirt never reports, after %s: %+v (error %+v)", time.Since(start), task, task.Error)
	}

	// A disabled VDC's VMs are not started; they may be stopped.
	disabled := false
	upd := vdcBody("power", 0, 0, 0)
	upd.IsEnabled = &disabled
	sys.must(t, "PUT", "/api/admin/org/"+tn.org.ID+"/vdcs/"+vdc.ID, upd, http.StatusOK, nil)
	if st, _ := tn.user.powerAction(t, vm1.ID, "powerOn"); st != http.StatusConflict {
		t.Errorf("power on in a disabled VDC: %d, want 409", st)
	}
	tn.user.must(t, "POST", "/cloudapi/1.0.0/vms/"+vm1.ID+"/actions/powerOff", `{"force":true}`, http.StatusBadRequest, nil)
}

// Another organization's VM answers exactly as a missing one, to reads and to power actions, and is not changed.
func TestVMIsolation(t *testing.T) {
	sys := sysadmin(t)
	tn, other := newTenant(t, sys), newTenant(t, sys)
	var vdc api.VDC
	sys.must(t, "POST", "/api/admin/org/"+tn.org.ID+"/vdcs", vdcBody("mine", 0, 0, 0), http.StatusCreated, &vdc)
	var cat api.Catalog
	tn.admin.must(t, "POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: "vms"}, http.StatusCreated, &cat)
	app, vms := deployedVApp(t, tn.user, vdc, cat.ID, "private", "private-0")
	ghost := "urn:vcloud:vm:" + uuid.NewString()
	for _, c := range []*client{other.admin, other.user} {
		for _, id := range []string{vms[0].ID, ghost} {
			c.must(t, "GET", "/cloudapi/1.0.0/vms/"+id, nil, http.StatusForbidden, nil)
			for _, action := range []string{"powerOn", "powerOff", "reset"} {
				if st, loc := c.powerAction(t, id, action); st != http.StatusForbidden || loc != "" {
					t.Errorf("%s of %s by another organization: %d %q", action, id, st, loc)
				}
			}
		}
		c.must(t, "GET", "/cloudapi/1.0.0/vapps/"+app.ID+"/vms", nil, http.StatusForbidden, nil)
		var all api.Paged[api.VM]
		c.must(t, "GET", "/cloudapi/1.0.0/vms", nil, http.StatusOK, &all)
		if all.ResultTotal != 0 {
			t.Errorf("another organization lists VMs: %+v", all.Values)
		}
	}
	k := virtualMachine(t, vdc.Namespace, vms[0].Name)
	if s, _, _ := unstructured.NestedString(k.Object, "spec", "runStrategy"); s != "" || k.GetGeneration() != 1 {
		t.Errorf("the VM was changed by another organization's calls: %v, generation %d", k.Object["spec"], k.GetGeneration())
	}
	// The system administrator sees every organization's VMs.
	if v := sys.getVM(t, vms[0].ID); v.Org.ID != tn.org.ID {
		t.Errorf("the system administrator's read: %+v", v)
	}
}
