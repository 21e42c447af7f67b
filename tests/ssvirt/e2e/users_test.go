//go:build e2e

package e2e_test

import (
	"net/http"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
)

// TestUsersCloudAPIShape: users in CloudAPI's shape (roleEntityRefs from the roles list, orgEntityRef), read,
// changed and deleted; names unique per organization; a disabled or deleted account's logins and sessions end;
// the tenant context narrows a system administrator and never widens anyone else.
func TestUsersCloudAPIShape(t *testing.T) {
	sys := sysadmin(t)
	a, b := newTenant(t, sys), newTenant(t, sys)

	var roles api.Paged[api.Role]
	a.admin.must(t, "GET", "/cloudapi/1.0.0/roles/?filter=name==vApp%20User", nil, http.StatusOK, &roles)
	if roles.ResultTotal != 1 || roles.Values[0].Name != "vApp User" {
		t.Fatalf("roles named vApp User: %+v", roles)
	}
	vappUser := roles.Values[0]
	var all api.Paged[api.Role]
	a.admin.must(t, "GET", "/cloudapi/1.0.0/roles", nil, http.StatusOK, &all)
	for _, r := range all.Values {
		if r.Name == "System Administrator" {
			t.Error("an organization administrator is offered the system administrator's role")
		}
	}

	// By role id, in the caller's own organization (no orgEntityRef).
	name := unique("carol")
	var u api.User
	a.admin.must(t, "POST", "/cloudapi/1.0.0/users/", api.User{Username: name, Password: "password-carol",
		RoleEntityRefs: []api.Ref{{ID: vappUser.ID}}, ProviderType: "LOCAL"}, http.StatusCreated, &u)
	if len(u.RoleEntityRefs) != 1 || u.RoleEntityRefs[0] != (api.Ref{Name: "vApp User", ID: vappUser.ID}) ||
		u.OrgEntityRef == nil || *u.OrgEntityRef != (api.Ref{Name: a.org.Name, ID: a.org.ID}) || u.Password != "" {
		t.Errorf("created user: %+v", u)
	}
	a.admin.must(t, "POST", "/cloudapi/1.0.0/users", userBody(name, "password-x", "vApp User", a.org.ID), http.StatusConflict, nil)
	// The same name in another organization is another account, and logs in there.
	b.admin.must(t, "POST", "/cloudapi/1.0.0/users", userBody(name, "password-other", "Organization Administrator", ""), http.StatusCreated, nil)
	carol := login(t, srv, name, a.org.Name, "password-carol")
	login(t, srv, name, b.org.Name, "password-other")
	if _, status := tryLogin(t, srv, name, a.org.Name, "password-other"); status != http.StatusUnauthorized {
		t.Errorf("b's password for a's %s: %d", name, status)
	}
	// The old shape is refused with the field named, not half-read.
	var e api.Error
	a.admin.must(t, "POST", "/cloudapi/1.0.0/users", `{"username":"x1","password":"password-x","roleName":"vApp User"}`, http.StatusBadRequest, &e)

	var got api.User
	a.admin.must(t, "GET", "/cloudapi/1.0.0/users/"+u.ID, nil, http.StatusOK, &got)
	carol.must(t, "GET", "/cloudapi/1.0.0/users/"+u.ID, nil, http.StatusOK, &got)
	var adminUser api.Paged[api.User]
	a.admin.must(t, "GET", "/cloudapi/1.0.0/users?filter=username=="+a.adminN, nil, http.StatusOK, &adminUser)
	if adminUser.ResultTotal != 1 {
		t.Fatalf("users named %s: %+v", a.adminN, adminUser)
	}
	carol.must(t, "GET", "/cloudapi/1.0.0/users/"+adminUser.Values[0].ID, nil, http.StatusForbidden, nil)
	carol.must(t, "PUT", "/cloudapi/1.0.0/users/"+u.ID, got, http.StatusForbidden, nil)
	b.admin.must(t, "GET", "/cloudapi/1.0.0/users/"+u.ID, nil, http.StatusForbidden, nil)
	b.admin.must(t, "DELETE", "/cloudapi/1.0.0/users/"+u.ID, nil, http.StatusForbidden, nil)

	// What the SDK sends back on update: the object it read, changed.
	renamed := got
	renamed.Username = "mallory"
	a.admin.must(t, "PUT", "/cloudapi/1.0.0/users/"+u.ID, renamed, http.StatusBadRequest, nil)
	promoted := got
	promoted.RoleEntityRefs = []api.Ref{{Name: "System Administrator"}}
	a.admin.must(t, "PUT", "/cloudapi/1.0.0/users/"+u.ID, promoted, http.StatusBadRequest, nil)
	disabled := false
	got.Enabled = &disabled
	a.admin.must(t, "PUT", "/cloudapi/1.0.0/users/"+u.ID, got, http.StatusOK, &got)
	if got.Enabled == nil || *got.Enabled {
		t.Errorf("after disabling: %+v", got)
	}
	carol.must(t, "GET", "/cloudapi/1.0.0/vapps", nil, http.StatusUnauthorized, nil)
	if _, status := tryLogin(t, srv, name, a.org.Name, "password-carol"); status != http.StatusUnauthorized {
		t.Errorf("a disabled account logs in: %d", status)
	}
	a.admin.must(t, "DELETE", "/cloudapi/1.0.0/users/"+u.ID, nil, http.StatusNoContent, nil)
	a.admin.must(t, "GET", "/cloudapi/1.0.0/users/"+u.ID, nil, http.StatusForbidden, nil)

	// Tenant context: a system administrator's lists narrow to the organization; another organization's id
	// from a tenant is refused as a missing organization would be.
	var users api.Paged[api.User]
	sys.must(t, "GET", "/cloudapi/1.0.0/users", nil, http.StatusOK, &users)
	all0 := users.ResultTotal
	req := func(c *client, org string) (int, api.Paged[api.User]) {
		t.Helper()
		var page api.Paged[api.User]
		status, _, body := raw(t, "GET", srv.url+"/cloudapi/1.0.0/users", map[string]string{
			"Authorization": "Bearer " + c.token, api.HeaderTenantContext: org})
		if status == http.StatusOK {
			mustJSON(t, body, &page)
		}
		return status, page
	}
	status, page := req(sys, a.org.ID[len("urn:vcloud:org:"):])
	if status != http.StatusOK || page.ResultTotal >= all0 || page.ResultTotal == 0 {
		t.Errorf("system administrator in a's context: %d, %d of %d users", status, page.ResultTotal, all0)
	}
	for _, v := range page.Values {
		if v.OrgEntityRef.ID != a.org.ID {
			t.Errorf("a's context lists %+v", v)
		}
	}
	if status, _ := req(a.admin, b.org.ID); status != http.StatusForbidden {
		t.Errorf("a's administrator in b's context: %d, want 403", status)
	}
	if status, _ := req(a.admin, a.org.ID); status != http.StatusOK {
		t.Errorf("a's administrator in its own context: %d", status)
	}
}

// A password change ends every session the account had, at once; the new password's session lives on through a
// change that leaves the password alone. A deleted account's sessions end with it.
func TestPasswordChangeEndsSessions(t *testing.T) {
	sys := sysadmin(t)
	tn := newTenant(t, sys)
	name := unique("dave")
	var u api.User
	tn.admin.must(t, "POST", "/cloudapi/1.0.0/users", userBody(name, "password-one", "vApp User", ""), http.StatusCreated, &u)
	first := login(t, srv, name, tn.org.Name, "password-one")
	second := login(t, srv, name, tn.org.Name, "password-one")
	first.must(t, "GET", "/cloudapi/1.0.0/sessions/current", nil, http.StatusOK, nil)

	u.Password = "password-two"
	tn.admin.must(t, "PUT", "/cloudapi/1.0.0/users/"+u.ID, u, http.StatusOK, &u)
	for i, c := range []*client{first, second} {
		if got := c.do(t, "GET", "/cloudapi/1.0.0/vapps", nil, nil); got != http.StatusUnauthorized {
			t.Errorf("session %d after the password changed: %d, want 401", i+1, got)
		}
	}
	if _, status := tryLogin(t, srv, name, tn.org.Name, "password-one"); status != http.StatusUnauthorized {
		t.Errorf("the old password logs in: %d", status)
	}
	third := login(t, srv, name, tn.org.Name, "password-two")
	third.must(t, "GET", "/cloudapi/1.0.0/vapps", nil, http.StatusOK, nil)
	// A change without a password keeps the sessions.
	u.Password = ""
	tn.admin.must(t, "PUT", "/cloudapi/1.0.0/users/"+u.ID, u, http.StatusOK, nil)
	third.must(t, "GET", "/cloudapi/1.0.0/vapps", nil, http.StatusOK, nil)

	tn.admin.must(t, "DELETE", "/cloudapi/1.0.0/users/"+u.ID, nil, http.StatusNoContent, nil)
	if got := third.do(t, "GET", "/cloudapi/1.0.0/vapps", nil, nil); got != http.StatusUnauthorized {
		t.Errorf("a deleted account's session: %d, want 401", got)
	}
	// The same name again is another account: the old token does not become its session.
	tn.admin.must(t, "POST", "/cloudapi/1.0.0/users", userBody(name, "password-two", "vApp User", ""), http.StatusCreated, nil)
	if got := third.do(t, "GET", "/cloudapi/1.0.0/vapps", nil, nil); got != http.StatusUnauthorized {
		t.Errorf("a deleted account's session once the name is taken again: %d, want 401", got)
	}
}
