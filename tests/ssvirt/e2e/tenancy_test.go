//go:build e2e

package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/fixture"
)

// world is organization B with one of everything, and organization A whose callers must not reach any of it.
type world struct {
	a, b    tenant
	vdc     api.VDC
	catalog api.Catalog
	item    api.CatalogItem
	vapp    api.VApp
	vm      api.VM
	// task is the path of the vApp's instantiation task; user is B's administrator's id.
	task, user string
}

func newWorld(t *testing.T) world {
	t.Helper()
	sys := sysadmin(t)
	w := world{a: newTenant(t, sys), b: newTenant(t, sys)}
	sys.must(t, "POST", "/api/admin/org/"+w.b.org.ID+"/vdcs", vdcBody("prod", 1000, 1024, 1), http.StatusCreated, &w.vdc)
	w.b.admin.must(t, "POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: "public"}, http.StatusCreated, &w.catalog)
	var items api.Paged[api.CatalogItem]
	w.b.user.must(t, "GET", "/cloudapi/1.0.0/catalogs/"+w.catalog.ID+"/catalogItems", nil, http.StatusOK, &items)
	if len(items.Values) == 0 {
		t.Fatal("org b's catalog has no items")
	}
	w.item = items.Values[0]
	_, h := w.b.user.doH(t, "POST", "/cloudapi/1.0.0/vdcs/"+w.vdc.ID+"/actions/instantiateTemplate", api.InstantiateRequest{
		Name: "app", CatalogItem: api.Ref{ID: w.item.ID}, Parameters: map[string]string{"NAME": "vm1"},
	}, &w.vapp)
	w.task = strings.TrimPrefix(h.Get("Location"), srv.url)
	var users api.Paged[api.User]
	w.b.admin.must(t, "GET", "/cloudapi/1.0.0/users?filter=username=="+w.b.adminN, nil, http.StatusOK, &users)
	if w.vapp.ID == "" || !strings.HasPrefix(w.task, "/api/task/") || users.ResultTotal != 1 {
		t.Fatalf("org b's vApp %+v, task %q, admin %+v", w.vapp, w.task, users)
	}
	w.user = users.Values[0].ID
	ti, err := templateInstance(t.Context(), w.vdc.Namespace, w.vapp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := fixture.Expand(t.Context(), dyn, ti, "vm1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "org b's VM listed", 30*time.Second, func() (bool, string) {
		var vms api.Paged[api.VM]
		w.b.user.must(t, "GET", "/cloudapi/1.0.0/vapps/"+w.vapp.ID+"/vms", nil, http.StatusOK, &vms)
		if len(vms.Values) == 1 && vms.Values[0].Status == "POWERED_ON" {
			w.vm = vms.Values[0]
		}
		return w.vm.ID != "", "not listed as powered on yet"
	})
	return w
}

// Every endpoint, called by organization A's administrator and user on organization B's entities: reads,
// writes and deletes answer what they answer for an entity that does not exist (Cloud Director's 403, which its
// clients read as "not found"), so existence is not revealed; lists leave B's entities out, and B's entities
// are all still there afterwards.
func TestTenantIsolation(t *testing.T) {
	w := newWorld(t)
	b := w.b.org.ID
	ghost := func(kind string) string { return "urn:vcloud:" + kind + ":" + uuid.NewString() }
	actual := targets{org: b, vdc: w.vdc.ID, catalog: w.catalog.ID, item: w.item.ID, vapp: w.vapp.ID, orgName: w.b.org.Name,
		user: w.user, task: w.task, vm: w.vm.ID}
	missing := targets{org: ghost("org"), vdc: ghost("vdc"), catalog: ghost("catalog"), item: ghost("catalogitem"), vapp: ghost("vapp"),
		orgName: w.b.org.Name, user: ghost("user"), task: "/api/task/" + uuid.NewString(), vm: ghost("vm")}
	for who, c := range map[string]*client{"admin": w.a.admin, "user": w.a.user} {
		realAttempts, missingAttempts := attempts(actual, w.a.org.ID), attempts(missing, w.a.org.ID)
		for i, a := range realAttempts {
			got := c.do(t, a.method, a.path, a.body, nil)
			// The answer about B's entity is the answer about an entity that does not exist: nothing leaks.
			m := missingAttempts[i]
			if want := c.do(t, m.method, m.path, m.body, nil); got != want || got < 400 {
				t.Errorf("org a's %s: %s %s = %d; for a missing entity %d", who, a.method, a.path, got, want)
			}
			// Administrators pass every role check, so for them it is always "not found".
			if who == "admin" && got != http.StatusForbidden {
				t.Errorf("org a's admin: %s %s = %d, want 403", a.method, a.path, got)
			}
		}
		// Lists leave B's entities out.
		for _, path := range []string{"/cloudapi/1.0.0/orgs", "/cloudapi/1.0.0/vdcs", "/cloudapi/1.0.0/catalogs", "/cloudapi/1.0.0/vapps",
			"/cloudapi/1.0.0/vms"} {
			var page api.Paged[json.RawMessage]
			c.must(t, "GET", path, nil, http.StatusOK, &page)
			for _, v := range page.Values {
				var ref struct {
					ID  string  `json:"id"`
					Org api.Ref `json:"org"`
				}
				_ = json.Unmarshal(v, &ref)
				if ref.ID == b || ref.Org.ID == b {
					t.Errorf("org a's %s lists org b's %s", who, v)
				}
			}
		}
	}
	{
		var users api.Paged[api.User]
		w.a.admin.must(t, "GET", "/cloudapi/1.0.0/users", nil, http.StatusOK, &users)
		for _, u := range users.Values {
			if u.OrgEntityRef == nil || u.OrgEntityRef.ID != w.a.org.ID {
				t.Errorf("org a's admin lists a user of another organization: %+v", u)
			}
		}
	}

	// Role limits inside one's own organization: 403.
	w.a.user.must(t, "POST", "/cloudapi/1.0.0/orgs", api.Org{Name: unique("x")}, http.StatusForbidden, nil)
	w.a.user.must(t, "POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: "mine"}, http.StatusForbidden, nil)
	w.a.user.must(t, "GET", "/cloudapi/1.0.0/users", nil, http.StatusForbidden, nil)
	w.a.admin.must(t, "POST", "/cloudapi/1.0.0/users", userBody(unique("root"), "password-x", "System Administrator", ""), http.StatusForbidden, nil)
	w.a.admin.must(t, "PUT", "/cloudapi/1.0.0/orgs/"+w.a.org.ID, api.Org{Name: w.a.org.Name, Description: "mine"}, http.StatusForbidden, nil)

	// B's entities survived, unchanged.
	var vdc api.VDC
	w.b.user.must(t, "GET", "/cloudapi/1.0.0/vdcs/"+w.vdc.ID, nil, http.StatusOK, &vdc)
	if vdc.ComputeCapacity.CPU.Limit != 1000 {
		t.Errorf("org b's VDC changed: %+v", vdc)
	}
	w.b.user.must(t, "GET", "/cloudapi/1.0.0/catalogs/"+w.catalog.ID, nil, http.StatusOK, nil)
	w.b.user.must(t, "GET", "/cloudapi/1.0.0/vapps/"+w.vapp.ID, nil, http.StatusOK, nil)
	if v := w.b.user.getVM(t, w.vm.ID); v != w.vm {
		t.Errorf("org b's VM changed: %+v, was %+v", v, w.vm)
	}
	var org api.Org
	w.b.admin.must(t, "GET", "/cloudapi/1.0.0/orgs/"+b, nil, http.StatusOK, &org)
	if org.Description != "" {
		t.Errorf("org b changed: %+v", org)
	}
}

func TestSessions(t *testing.T) {
	sys := sysadmin(t)
	tn := newTenant(t, sys)
	for _, bad := range [][3]string{
		{tn.usrN, tn.org.Name, "wrong-password"},
		{"nobody", tn.org.Name, "password-x"},
		{tn.usrN, "System", "password-" + tn.usrN}, // right password, wrong organization
	} {
		if _, code := tryLogin(t, srv, bad[0], bad[1], bad[2]); code != http.StatusUnauthorized {
			t.Errorf("login %s@%s with %q: %d, want 401", bad[0], bad[1], bad[2], code)
		}
	}
	anon := &client{base: srv.url}
	anon.must(t, "GET", "/cloudapi/1.0.0/orgs", nil, http.StatusUnauthorized, nil)
	forged := &client{base: srv.url, token: tn.user.token[:len(tn.user.token)-2] + "xx"}
	forged.must(t, "GET", "/cloudapi/1.0.0/orgs", nil, http.StatusUnauthorized, nil)

	var s api.Session
	tn.user.must(t, "GET", "/cloudapi/1.0.0/sessions/current", nil, http.StatusOK, &s)
	if s.User.Name != tn.usrN || s.Org.ID != tn.org.ID || len(s.Roles) != 1 || s.Roles[0] != "vApp User" {
		t.Errorf("session: %+v", s)
	}
	// Another session's id is not the caller's to end.
	tn.user.must(t, "DELETE", "/cloudapi/1.0.0/sessions/urn:vcloud:session:00000000-0000-0000-0000-000000000000", nil, http.StatusForbidden, nil)
	tn.user.must(t, "DELETE", "/cloudapi/1.0.0/sessions/"+s.ID, nil, http.StatusNoContent, nil)
	tn.user.must(t, "GET", "/cloudapi/1.0.0/orgs", nil, http.StatusUnauthorized, nil)
	// Other sessions of the same user live on.
	again := login(t, srv, tn.usrN, tn.org.Name, "password-"+tn.usrN)
	again.must(t, "GET", "/cloudapi/1.0.0/orgs", nil, http.StatusOK, nil)
	// Disabling the organization ends logins into it.
	disabled := false
	sys.must(t, "PUT", "/cloudapi/1.0.0/orgs/"+tn.org.ID, api.Org{Name: tn.org.Name, IsEnabled: &disabled}, http.StatusOK, nil)
	if _, code := tryLogin(t, srv, tn.usrN, tn.org.Name, "password-"+tn.usrN); code != http.StatusUnauthorized {
		t.Errorf("login into a disabled organization: %d", code)
	}
}

type targets struct{ org, vdc, catalog, item, vapp, orgName, user, task, vm string }

type attempt struct {
	method, path string
	body         any
}

// attempts is one call of every endpoint at the targets, by a caller of organization own.
func attempts(x targets, own string) []attempt {
	return []attempt{
		{"GET", "/cloudapi/1.0.0/orgs/" + x.org, nil},
		{"PUT", "/cloudapi/1.0.0/orgs/" + x.org, api.Org{Name: x.orgName, Description: "taken over"}},
		{"DELETE", "/cloudapi/1.0.0/orgs/" + x.org, nil},
		{"POST", "/cloudapi/1.0.0/users", userBody(unique("intruder"), "password-x", "vApp User", x.org)},
		{"GET", "/cloudapi/1.0.0/users/" + x.user, nil},
		{"PUT", "/cloudapi/1.0.0/users/" + x.user, api.User{ID: x.user, Username: "intruder", RoleEntityRefs: []api.Ref{{Name: "vApp User"}}}},
		{"DELETE", "/cloudapi/1.0.0/users/" + x.user, nil},
		{"GET", x.task, nil},
		{"GET", "/api/admin/org/" + x.org + "/vdcs", nil},
		{"POST", "/api/admin/org/" + x.org + "/vdcs", vdcBody("evil", 0, 0, 0)},
		{"GET", "/api/admin/org/" + x.org + "/vdcs/" + x.vdc, nil},
		{"PUT", "/api/admin/org/" + x.org + "/vdcs/" + x.vdc, vdcBody("prod", 1, 1, 1)},
		{"DELETE", "/api/admin/org/" + x.org + "/vdcs/" + x.vdc, nil},
		// B's VDC under the caller's own organization's path.
		{"GET", "/api/admin/org/" + own + "/vdcs/" + x.vdc, nil},
		{"PUT", "/api/admin/org/" + own + "/vdcs/" + x.vdc, vdcBody("prod", 1, 1, 1)},
		{"DELETE", "/api/admin/org/" + own + "/vdcs/" + x.vdc, nil},
		{"GET", "/cloudapi/1.0.0/vdcs/" + x.vdc, nil},
		{"POST", "/cloudapi/1.0.0/vdcs/" + x.vdc + "/actions/instantiateTemplate",
			api.InstantiateRequest{Name: "x", CatalogItem: api.Ref{ID: x.item}, Parameters: map[string]string{"NAME": "x"}}},
		{"POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: "evil", Org: &api.Ref{ID: x.org}}},
		{"GET", "/cloudapi/1.0.0/catalogs/" + x.catalog, nil},
		{"DELETE", "/cloudapi/1.0.0/catalogs/" + x.catalog, nil},
		{"GET", "/cloudapi/1.0.0/catalogs/" + x.catalog + "/catalogItems", nil},
		{"GET", "/cloudapi/1.0.0/catalogs/" + x.catalog + "/catalogItems/" + x.item, nil},
		{"GET", "/cloudapi/1.0.0/vapps/" + x.vapp, nil},
		{"GET", "/cloudapi/1.0.0/vapps/" + x.vapp + "/vms", nil},
		{"GET", "/cloudapi/1.0.0/vms/" + x.vm, nil},
		{"POST", "/cloudapi/1.0.0/vms/" + x.vm + "/actions/powerOff", nil},
		{"POST", "/cloudapi/1.0.0/vms/" + x.vm + "/actions/powerOn", nil},
		{"POST", "/cloudapi/1.0.0/vms/" + x.vm + "/actions/reset", nil},
		{"DELETE", "/cloudapi/1.0.0/vapps/" + x.vapp, nil},
	}
}
