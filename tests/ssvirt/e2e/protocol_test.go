//go:build e2e

package e2e_test

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
)

// TestCloudDirectorClientConventions: what Cloud Director's own clients send works: the auth scheme in lower case,
// collections named with a trailing "/", the System organization's login URL, and logging out with DELETE on the
// login URL (the token is refused afterwards).
func TestCloudDirectorClientConventions(t *testing.T) {
	sys := sysadmin(t)
	raw := func(method, path, authorization string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, srv.url+path, nil)
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	if got := raw("GET", "/cloudapi/1.0.0/orgs", "bearer "+sys.token); got != http.StatusOK {
		t.Errorf(`"Authorization: bearer <token>": %d, want 200`, got)
	}
	if got := raw("GET", "/cloudapi/1.0.0/orgs", "Basic "+sys.token); got != http.StatusUnauthorized {
		t.Errorf(`"Authorization: Basic <token>": %d, want 401`, got)
	}

	provider := func(user, org, password string) (*client, int) {
		t.Helper()
		return tryLoginAt(t, srv, "/cloudapi/1.0.0/sessions/provider", user, org, password)
	}
	admin, status := provider(adminUser, "System", adminPass)
	if status != http.StatusOK || admin.token == "" {
		t.Fatalf("provider login as the system administrator: %d", status)
	}
	tn := newTenant(t, sys)
	var withSlash, without api.Paged[api.Org]
	sys.must(t, "GET", "/cloudapi/1.0.0/orgs/", nil, http.StatusOK, &withSlash)
	sys.must(t, "GET", "/cloudapi/1.0.0/orgs", nil, http.StatusOK, &without)
	if withSlash.ResultTotal != without.ResultTotal || withSlash.ResultTotal == 0 {
		t.Errorf("orgs/ listed %d, orgs %d", withSlash.ResultTotal, without.ResultTotal)
	}
	if _, status := provider(tn.adminN, tn.org.Name, "password-"+tn.adminN); status != http.StatusUnauthorized {
		t.Errorf("provider login as an organization administrator: %d, want 401", status)
	}

	for _, loginURL := range []string{"/cloudapi/1.0.0/sessions", "/cloudapi/1.0.0/sessions/provider"} {
		c := login(t, srv, adminUser, "System", adminPass)
		c.must(t, "DELETE", loginURL, nil, http.StatusNoContent, nil)
		if got := raw("GET", "/cloudapi/1.0.0/orgs", "Bearer "+c.token); got != http.StatusUnauthorized {
			t.Errorf("after DELETE %s the token answers %d, want 401", loginURL, got)
		}
	}
	admin.must(t, "GET", "/cloudapi/1.0.0/sessions/current", nil, http.StatusOK, nil)
}

// TestVersionsAndTokenHeader: /api/versions answers without a token in the XML the SDK parses, naming the served
// versions and both login URLs; a login there works; the token works in X-VMWARE-VCLOUD-ACCESS-TOKEN alone (how
// the SDK logs out), two different tokens are refused, and logging out with the header alone ends the session.
func TestVersionsAndTokenHeader(t *testing.T) {
	status, h, body := raw(t, "GET", srv.url+"/api/versions", nil)
	if status != http.StatusOK || !strings.Contains(h.Get("Content-Type"), "xml") {
		t.Fatalf("/api/versions: %d %s", status, h.Get("Content-Type"))
	}
	var doc struct {
		Infos []struct {
			Version          string `xml:"Version"`
			LoginURL         string `xml:"LoginUrl"`
			ProviderLoginURL string `xml:"ProviderLoginUrl"`
		} `xml:"VersionInfo"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	var versions []string
	for _, v := range doc.Infos {
		versions = append(versions, v.Version)
		if v.LoginURL != srv.url+"/cloudapi/1.0.0/sessions" || v.ProviderLoginURL != srv.url+"/cloudapi/1.0.0/sessions/provider" {
			t.Errorf("version %s logs in at %q and %q", v.Version, v.LoginURL, v.ProviderLoginURL)
		}
	}
	if strings.Join(versions, " ") != "37.0 40.0" {
		t.Errorf("versions %v, want 37.0 40.0", versions)
	}
	c, status := tryLoginAt(t, srv, strings.TrimPrefix(doc.Infos[0].ProviderLoginURL, srv.url), adminUser, "System", adminPass)
	if status != http.StatusOK {
		t.Fatalf("provider login at the advertised URL: %d", status)
	}
	other := sysadmin(t)
	orgs := srv.url + "/cloudapi/1.0.0/orgs"
	if got, _, _ := raw(t, "GET", orgs, map[string]string{api.HeaderAccessToken: c.token}); got != http.StatusOK {
		t.Errorf("token in %s only: %d, want 200", api.HeaderAccessToken, got)
	}
	if got, _, _ := raw(t, "GET", orgs, map[string]string{api.HeaderAccessToken: c.token, "Authorization": "Bearer " + other.token}); got != http.StatusUnauthorized {
		t.Errorf("two different tokens: %d, want 401", got)
	}
	if got, _, _ := raw(t, "GET", orgs, map[string]string{api.HeaderAccessToken: "not-a-token"}); got != http.StatusUnauthorized {
		t.Errorf("a forged token in %s: %d, want 401", api.HeaderAccessToken, got)
	}
	if got, _, _ := raw(t, "DELETE", doc.Infos[0].ProviderLoginURL, map[string]string{api.HeaderAccessToken: c.token}); got != http.StatusNoContent {
		t.Fatalf("logout with the header only: %d", got)
	}
	if got, _, _ := raw(t, "GET", orgs, map[string]string{api.HeaderAccessToken: c.token}); got != http.StatusUnauthorized {
		t.Errorf("the logged-out token: %d, want 401", got)
	}
	if got, _, _ := raw(t, "GET", orgs, map[string]string{api.HeaderAccessToken: other.token}); got != http.StatusOK {
		t.Errorf("another session after the logout: %d, want 200", got)
	}
}

// TestErrorShapes: /cloudapi answers errors in JSON, /api in Cloud Director's XML Error (JSON when asked for);
// a missing id is Cloud Director's 403, which its clients read as "not found"; an unknown path is 404.
func TestErrorShapes(t *testing.T) {
	sys := sysadmin(t)
	auth := map[string]string{"Authorization": "Bearer " + sys.token}
	ghost := uuid.NewString()
	xmlError := func(url string, wantStatus int, wantCode string) {
		t.Helper()
		status, h, body := raw(t, "GET", url, auth)
		var e api.XMLError
		if err := xml.Unmarshal(body, &e); err != nil || status != wantStatus || !strings.Contains(h.Get("Content-Type"), "xml") ||
			e.MinorErrorCode != wantCode || e.Message == "" || e.MajorErrorCode != wantStatus {
			t.Errorf("GET %s: %d %s %q (%v), want %d and an XML Error %s", url, status, h.Get("Content-Type"), body, err, wantStatus, wantCode)
		}
	}
	xmlError(srv.url+"/api/task/"+ghost, http.StatusForbidden, api.CodeForbidden)
	xmlError(srv.url+"/api/nothing/here", http.StatusNotFound, api.CodeNotFound)
	xmlError(srv.url+"/api/admin/org/urn:vcloud:org:"+ghost+"/vdcs", http.StatusForbidden, api.CodeForbidden)
	var e api.Error
	sys.must(t, "GET", "/cloudapi/1.0.0/orgs/urn:vcloud:org:"+ghost, nil, http.StatusForbidden, &e)
	if e.MinorErrorCode != api.CodeForbidden {
		t.Errorf("missing organization: %+v", e)
	}
	// JSON on /api when the client asks for it (the suite's client does).
	sys.must(t, "GET", "/api/admin/org/urn:vcloud:org:"+ghost+"/vdcs", nil, http.StatusForbidden, &e)
	if e.MinorErrorCode != api.CodeForbidden {
		t.Errorf("missing organization on /api as JSON: %+v", e)
	}
}

// TestFilterSortPaging: FIQL filters (==, !=, wildcards, ";" and ",") narrow lists and never widen them past the
// caller's organization; a filter the server cannot evaluate is a 400; sortAsc/sortDesc order; Link headers lead
// through every page with the filter kept.
func TestFilterSortPaging(t *testing.T) {
	sys := sysadmin(t)
	a, b := newTenant(t, sys), newTenant(t, sys)
	for _, n := range []string{"cat-a", "cat-b", "db-c", "Cat_d"} {
		a.admin.must(t, "POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: n}, http.StatusCreated, nil)
	}
	b.admin.must(t, "POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: "cat-a"}, http.StatusCreated, nil)
	names := func(c *client, query string) []string {
		t.Helper()
		var page api.Paged[api.Catalog]
		c.must(t, "GET", "/cloudapi/1.0.0/catalogs?"+query, nil, http.StatusOK, &page)
		var out []string
		for _, v := range page.Values {
			out = append(out, v.Name)
		}
		if page.ResultTotal != len(out) {
			t.Errorf("%s: resultTotal %d for %d values", query, page.ResultTotal, len(out))
		}
		return out
	}
	q := func(filter string) string { return "filter=" + url.QueryEscape(filter) }
	for _, c := range []struct{ query, want string }{
		{q("name==cat-a"), "cat-a"},
		{q("name!=cat-a"), "Cat_d cat-b db-c"},
		{q("name==cat*"), "Cat_d cat-a cat-b"},
		{q("name==*_*"), "Cat_d"},
		{q("name==cat*;name!=cat-b"), "Cat_d cat-a"},
		{q("name==db-c,name==cat-b"), "cat-b db-c"},
		{q("name==nothing"), ""},
		// B's organization id in an OR reaches nothing of B's.
		{q("name==nothing,org.id==" + b.org.ID), ""},
		{q("org.id=="+a.org.ID) + "&sortDesc=name", "db-c cat-b cat-a Cat_d"},
		{"sortAsc=name", "Cat_d cat-a cat-b db-c"},
	} {
		if got := strings.Join(names(a.user, c.query), " "); got != c.want {
			t.Errorf("%s: %q, want %q", c.query, got, c.want)
		}
	}
	// What GetTmOrgByName sends: a missing name finds nothing (it used to find the caller's own organization).
	var orgs api.Paged[api.Org]
	a.admin.must(t, "GET", "/cloudapi/1.0.0/orgs/?"+q("name==no-such-org"), nil, http.StatusOK, &orgs)
	if orgs.ResultTotal != 0 {
		t.Errorf("orgs with a missing name: %+v", orgs.Values)
	}
	a.admin.must(t, "GET", "/cloudapi/1.0.0/orgs/?"+q("name=="+a.org.Name+";isEnabled==true"), nil, http.StatusOK, &orgs)
	if orgs.ResultTotal != 1 || orgs.Values[0].ID != a.org.ID {
		t.Errorf("orgs by name: %+v", orgs.Values)
	}
	for _, bad := range []string{
		"/cloudapi/1.0.0/catalogs?" + q("color==red"),
		"/cloudapi/1.0.0/catalogs?" + q("name=gt=a"),
		"/cloudapi/1.0.0/catalogs?" + q("(name==a,name==b"),
		"/cloudapi/1.0.0/catalogs?" + q("name=="),
		"/cloudapi/1.0.0/catalogs?" + q("org.id==acme"),
		"/cloudapi/1.0.0/orgs?" + q("isEnabled==maybe"),
		"/cloudapi/1.0.0/orgs?" + q("id==urn:vcloud:org:*"),
		"/cloudapi/1.0.0/catalogs?sortAsc=name&sortDesc=name",
		"/cloudapi/1.0.0/catalogs?sortAsc=color",
	} {
		var e api.Error
		if got := a.admin.do(t, "GET", bad, nil, &e); got != http.StatusBadRequest || e.Message == "" {
			t.Errorf("GET %s: %d %+v, want 400 with a message", bad, got, e)
		}
	}
	// Items (Templates, not rows) filter too.
	var cat api.Paged[api.Catalog]
	a.user.must(t, "GET", "/cloudapi/1.0.0/catalogs?"+q("name==cat-a"), nil, http.StatusOK, &cat)
	var items api.Paged[api.CatalogItem]
	a.user.must(t, "GET", "/cloudapi/1.0.0/catalogs/"+cat.Values[0].ID+"/catalogItems?"+q("templateName==fedora"), nil, http.StatusOK, &items)
	if items.ResultTotal != 1 || items.Values[0].TemplateName != "fedora" {
		t.Errorf("items by template name: %+v", items)
	}

	// Paging: Link headers, absolute, keeping the filter, from the first page to the last.
	next := srv.url + "/cloudapi/1.0.0/catalogs/?pageSize=1&sortAsc=name&" + q("name!=db-c")
	var seen []string
	for pages := 0; next != ""; pages++ {
		if pages > 5 {
			t.Fatal("nextPage never ends")
		}
		status, h, body := raw(t, "GET", next, map[string]string{"Authorization": "bearer " + a.user.token})
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d", next, status)
		}
		var page api.Paged[api.Catalog]
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Values {
			seen = append(seen, v.Name)
		}
		links := linkRels(h)
		next = links["nextPage"]
		if page.Page > 1 && links["previousPage"] == "" {
			t.Errorf("page %d has no previousPage link: %v", page.Page, h.Values("Link"))
		}
		if links["lastPage"] == "" || !strings.Contains(links["lastPage"], "page=3") {
			t.Errorf("page %d: lastPage %q", page.Page, links["lastPage"])
		}
	}
	if got := strings.Join(seen, " "); got != "Cat_d cat-a cat-b" {
		t.Errorf("followed nextPage through %q", got)
	}
}

// linkRels reads Link headers into rel -> URL.
func linkRels(h http.Header) map[string]string {
	out := map[string]string{}
	for _, v := range h.Values("Link") {
		for _, l := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(l), ";")
			if !ok {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				if rel, ok := strings.CutPrefix(strings.TrimSpace(p), "rel="); ok {
					out[strings.Trim(rel, `"`)] = strings.Trim(target, "<>")
				}
			}
		}
	}
	return out
}
