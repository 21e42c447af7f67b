//go:build e2e

package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
)

// sendAs sends body (JSON) declared as contentType ("" declares none) and returns the status, the Allow header
// and the error body of a failure.
func (c *client) sendAs(t *testing.T, method, path, contentType string, body any) (int, string, api.Error) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, c.base+path, bytes.NewReader(data))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e api.Error
	if resp.StatusCode >= 400 {
		mustJSON(t, raw, &e)
	}
	return resp.StatusCode, resp.Header.Get("Allow"), e
}

// Every endpoint that reads a JSON body refuses one not declared as JSON with 415 and writes nothing, whatever
// the body holds; JSON with parameters (as Cloud Director's clients declare it) and a +json type are taken.
func TestBodiesMustBeDeclaredJSON(t *testing.T) {
	sys := sysadmin(t)
	tn := newTenant(t, sys)
	var vdc api.VDC
	sys.must(t, "POST", "/api/admin/org/"+tn.org.ID+"/vdcs", vdcBody("wire", 1000, 512, 0), http.StatusCreated, &vdc)
	var cat api.Catalog
	tn.admin.must(t, "POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: "wire"}, http.StatusCreated, &cat)
	var users api.Paged[api.User]
	tn.admin.must(t, "GET", "/cloudapi/1.0.0/users?filter=username=="+tn.usrN, nil, http.StatusOK, &users)
	user := users.Values[0]
	orgRef := &api.Ref{ID: tn.org.ID}
	endpoints := []struct {
		method, path string
		body         any
	}{
		{"POST", "/cloudapi/1.0.0/orgs", api.Org{Name: unique("wire")}},
		{"PUT", "/cloudapi/1.0.0/orgs/" + tn.org.ID, api.Org{Name: tn.org.Name, Description: "changed"}},
		{"POST", "/cloudapi/1.0.0/users", userBody(unique("wire"), "password-wire", "vApp User", tn.org.ID)},
		{"PUT", "/cloudapi/1.0.0/users/" + user.ID, user},
		{"POST", "/api/admin/org/" + tn.org.ID + "/vdcs", vdcBody(unique("wire"), 100, 64, 0)},
		{"PUT", "/api/admin/org/" + tn.org.ID + "/vdcs/" + vdc.ID, vdcBody("wire", 100, 64, 0)},
		{"POST", "/cloudapi/1.0.0/catalogs", api.Catalog{Name: unique("wire"), Org: orgRef}},
		{"POST", "/cloudapi/1.0.0/vdcs/" + vdc.ID + "/actions/instantiateTemplate", api.InstantiateRequest{Name: "wire"}},
		{"POST", "/cloudapi/vcf/virtualDatacenters", api.TmVDC{Name: unique("wire"), Org: orgRef}},
		{"PUT", "/cloudapi/vcf/virtualDatacenters/" + vdc.ID, api.TmVDC{Name: "wire", Description: "changed"}},
		{"POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: unique("wire"), Org: orgRef}},
		{"PUT", "/cloudapi/vcf/contentLibraries/" + cat.ID, api.ContentLibrary{Name: "wire", Description: "changed"}},
	}
	var before api.Paged[api.Org]
	sys.must(t, "GET", "/cloudapi/1.0.0/orgs", nil, http.StatusOK, &before)
	for _, ep := range endpoints {
		for _, ct := range []string{"", "text/plain", "application/xml", "application/x-www-form-urlencoded", "application/jsonx", "not a type"} {
			status, _, e := sys.sendAs(t, ep.method, ep.path, ct, ep.body)
			if status != http.StatusUnsupportedMediaType || e.MinorErrorCode == "" || !strings.Contains(e.Message, "JSON") {
				t.Errorf("%s %s as %q: %d %+v, want 415", ep.method, ep.path, ct, status, e)
			}
		}
	}
	var orgs api.Paged[api.Org]
	sys.must(t, "GET", "/cloudapi/1.0.0/orgs", nil, http.StatusOK, &orgs)
	var libs api.Paged[api.Catalog]
	tn.admin.must(t, "GET", "/cloudapi/1.0.0/catalogs", nil, http.StatusOK, &libs)
	var got api.VDC
	sys.must(t, "GET", "/api/admin/org/"+tn.org.ID+"/vdcs/"+vdc.ID, nil, http.StatusOK, &got)
	if orgs.ResultTotal != before.ResultTotal || libs.ResultTotal != 1 || got.Description != "" || got.ComputeCapacity.CPU.Limit != 1000 {
		t.Errorf("refused bodies were written: %d organizations, %d catalogs, VDC %+v", orgs.ResultTotal, libs.ResultTotal, got)
	}
	for _, ct := range []string{"application/json;version=40.0", "application/json; charset=utf-8", "application/vnd.vmware.vcloud.org+json"} {
		if status, _, e := sys.sendAs(t, "POST", "/cloudapi/1.0.0/orgs", ct, api.Org{Name: unique("json")}); status != http.StatusCreated {
			t.Errorf("a body declared as %q: %d %+v", ct, status, e)
		}
	}
}

// A method an existing path does not serve is 405 with the methods it does serve in Allow; a path that does
// not exist stays 404.
func TestMethodNotServedOnAPath(t *testing.T) {
	sys := sysadmin(t)
	tn := newTenant(t, sys)
	var vdc api.VDC
	sys.must(t, "POST", "/api/admin/org/"+tn.org.ID+"/vdcs", vdcBody("methods", 100, 64, 0), http.StatusCreated, &vdc)
	for _, c := range []struct {
		method, path string
		allow        []string
	}{
		{"PATCH", "/cloudapi/1.0.0/orgs/" + tn.org.ID, []string{"DELETE", "GET", "HEAD", "PUT"}},
		{"PUT", "/cloudapi/1.0.0/vdcs/" + vdc.ID, []string{"GET", "HEAD"}},
		{"DELETE", "/cloudapi/1.0.0/orgs", []string{"GET", "HEAD", "POST"}},
		{"POST", "/cloudapi/1.0.0/vms/urn:vcloud:vm:x", []string{"GET", "HEAD"}},
		{"GET", "/cloudapi/1.0.0/vms/urn:vcloud:vm:x/actions/powerOn", []string{"POST"}},
		{"PATCH", "/cloudapi/vcf/virtualDatacenters/" + vdc.ID + "/", []string{"DELETE", "GET", "HEAD", "PUT"}},
	} {
		status, allow, e := sys.sendAs(t, c.method, c.path, "application/json", map[string]string{})
		got := strings.Split(allow, ", ")
		sort.Strings(got)
		if status != http.StatusMethodNotAllowed || strings.Join(got, ",") != strings.Join(c.allow, ",") || e.Message == "" {
			t.Errorf("%s %s: %d, Allow %q, %+v; want 405 with %v", c.method, c.path, status, allow, e, c.allow)
		}
	}
	if status, allow, _ := sys.sendAs(t, "PATCH", "/cloudapi/1.0.0/nothing", "application/json", nil); status != http.StatusNotFound || allow != "" {
		t.Errorf("an unknown path: %d, Allow %q; want 404", status, allow)
	}
}
