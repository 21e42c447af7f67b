//go:build e2e

package e2e_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/fixture"
)

// deployedVApp instantiates the fedora item in vdc as c, plays the template controller making VMs named names,
// and waits for the instantiation task and for every VM to be listed as powered on.
func deployedVApp(t *testing.T, c *client, vdc api.VDC, catalogID, name string, names ...string) (api.VApp, []api.VM) {
	t.Helper()
	var items api.Paged[api.CatalogItem]
	c.must(t, "GET", "/cloudapi/1.0.0/catalogs/"+catalogID+"/catalogItems?filter=templateName==fedora", nil, http.StatusOK, &items)
	var app api.VApp
	status, h := c.doH(t, "POST", "/cloudapi/1.0.0/vdcs/"+vdc.ID+"/actions/instantiateTemplate", api.InstantiateRequest{
		Name: name, CatalogItem: api.Ref{ID: items.Values[0].ID}, Parameters: map[string]string{"NAME": name},
	}, &app)
	if status != http.StatusAccepted {
		t.Fatalf("instantiate %s: %d", name, status)
	}
	ti, err := templateInstance(t.Context(), vdc.Namespace, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := fixture.Expand(t.Context(), dyn, ti, names...); err != nil {
		t.Fatal(err)
	}
	if task := c.waitTask(t, h.Get("Location"), 30*time.Second); task.Status != "success" {
		t.Fatalf("instantiation task: %+v", task)
	}
	var vms []api.VM
	eventually(t, "the vApp's VMs listed, powered on", 30*time.Second, func() (bool, string) {
		var page api.Paged[api.VM]
		c.must(t, "GET", "/cloudapi/1.0.0/vapps/"+app.ID+"/vms", nil, http.StatusOK, &page)
		vms = page.Values
		if len(vms) != len(names) {
			return false, "listed: " + vmNames(vms)
		}
		for _, v := range vms {
			if v.Status != "POWERED_ON" || !v.Ready {
				return false, v.Name + " is " + v.PrintableStatus
			}
		}
		return true, ""
	})
	return app, vms
}

func vmNames(vms []api.VM) string {
	var out []string
	for _, v := range vms {
		out = append(out, v.Name)
	}
	return strings.Join(out, ",")
}

// powerAction posts action on VM id as c and returns the status and the task's Location.
func (c *client) powerAction(t *testing.T, id, action string) (int, string) {
	t.Helper()
	status, h := c.doH(t, "POST", "/cloudapi/1.0.0/vms/"+id+"/actions/"+action, nil, nil)
	return status, h.Get("Location")
}

// virtualMachine reads VM namespace/name as Kubernetes has it.
func virtualMachine(t *testing.T, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := dyn.Resource(fixture.VirtualMachines).Namespace(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (c *client) getVM(t *testing.T, id string) api.VM {
	t.Helper()
	var v api.VM
	c.must(t, "GET", "/cloudapi/1.0.0/vms/"+id, nil, http.StatusOK, &v)
	return v
}
