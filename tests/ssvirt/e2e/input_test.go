//go:build e2e

package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
)

// Bad input is answered 400 (413 for an oversized body) with a message, and nothing is written.
func TestBadInput(t *testing.T) {
	sys := sysadmin(t)
	tn := newTenant(t, sys)
	vdcs := "/api/admin/org/" + tn.org.ID + "/vdcs"
	count := func(path string) int {
		var p api.Paged[any]
		sys.must(t, "GET", path, nil, http.StatusOK, &p)
		return p.ResultTotal
	}
	orgsBefore, vdcsBefore := count("/cloudapi/1.0.0/orgs"), count(vdcs)
	cases := []struct {
		name, method, path string
		body               any
		want               int
	}{
		{"unknown field", "POST", "/cloudapi/1.0.0/orgs", `{"name":"ok1","color":"red"}`, 400},
		{"wrong type", "POST", "/cloudapi/1.0.0/orgs", `{"name":42}`, 400},
		{"not JSON", "POST", "/cloudapi/1.0.0/orgs", `{"name":`, 400},
		{"two values", "POST", "/cloudapi/1.0.0/orgs", `{"name":"ok2"}{"name":"ok3"}`, 400},
		{"empty body", "POST", "/cloudapi/1.0.0/orgs", "", 400},
		{"bad name", "POST", "/cloudapi/1.0.0/orgs", api.Org{Name: "bad name!"}, 400},
		{"reserved name", "POST", "/cloudapi/1.0.0/orgs", api.Org{Name: "system"}, 400},
		{"injection as name", "POST", "/cloudapi/1.0.0/orgs", api.Org{Name: "x'; DROP TABLE organizations; --"}, 400},
		{"long name", "POST", "/cloudapi/1.0.0/orgs", api.Org{Name: strings.Repeat("a", 64)}, 400},
		{"oversized body", "POST", "/cloudapi/1.0.0/orgs", `{"name":"big","description":"` + strings.Repeat("x", 70<<10) + `"}`, 413},
		{"server-set id", "POST", "/cloudapi/1.0.0/orgs", api.Org{ID: "urn:vcloud:org:x", Name: "ok4"}, 400},
		{"negative limit", "POST", vdcs, vdcBody("neg", -1, 0, 0), 400},
		{"huge limit", "POST", vdcs, vdcBody("huge", 1<<40, 0, 0), 400},
		{"wrong units", "POST", vdcs, `{"name":"u","computeCapacity":{"cpu":{"limit":1,"units":"MHz"},"memory":{"limit":1}}}`, 400},
		{"limit as string", "POST", vdcs, `{"name":"s","computeCapacity":{"cpu":{"limit":"1"},"memory":{"limit":1}}}`, 400},
		{"namespace chosen by caller", "POST", vdcs, `{"name":"n","namespace":"kube-system"}`, 400},
		{"bad vdc name", "POST", vdcs, vdcBody("-x", 0, 0, 0), 400},
		{"bad page", "GET", "/cloudapi/1.0.0/orgs?page=0", nil, 400},
		{"page size too big", "GET", "/cloudapi/1.0.0/orgs?pageSize=1000", nil, 400},
		{"page not a number", "GET", "/cloudapi/1.0.0/orgs?page=x", nil, 400},
		{"short password", "POST", "/cloudapi/1.0.0/users", userBody("shorty", "x", "vApp User", tn.org.ID), 400},
		{"unknown role", "POST", "/cloudapi/1.0.0/users", userBody("r", "password-x", "root", tn.org.ID), 400},
		{"malformed id", "GET", "/cloudapi/1.0.0/orgs/not-a-urn", nil, 403},
		{"unknown path", "GET", "/cloudapi/1.0.0/nothing", nil, 404},
	}
	for _, c := range cases {
		var e api.Error
		if got := sys.do(t, c.method, c.path, c.body, &e); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		} else if e.Message == "" {
			t.Errorf("%s: no message", c.name)
		}
	}
	if got := count("/cloudapi/1.0.0/orgs"); got != orgsBefore {
		t.Errorf("organizations: %d after bad input, %d before", got, orgsBefore)
	}
	if got := count(vdcs); got != vdcsBefore {
		t.Errorf("VDCs: %d after bad input, %d before", got, vdcsBefore)
	}
	// An organization name with a quote is data, never SQL: the organizations table is intact.
	if count("/cloudapi/1.0.0/orgs") == 0 {
		t.Error("organizations gone")
	}
	// A malformed paged answer would break clients: check the shape once.
	var p api.Paged[api.Org]
	sys.must(t, "GET", "/cloudapi/1.0.0/orgs?page=1&pageSize=1", nil, http.StatusOK, &p)
	if p.PageSize != 1 || p.Page != 1 || len(p.Values) != 1 || p.PageCount != p.ResultTotal {
		t.Errorf("paging: %+v", p)
	}
}
