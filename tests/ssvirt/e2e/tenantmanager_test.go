//go:build e2e

package e2e_test

import (
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
)

// The Tenant Manager's virtual datacenters are the same VDCs: listed, filtered and paged within the caller's
// organization, another organization's answering 403 as a missing one; created by system administrators in the
// body's organization with the memory limit of the one zone, and deleted as through the admin API.
func TestTmVirtualDatacenters(t *testing.T) {
	sys := sysadmin(t)
	a, b := newTenant(t, sys), newTenant(t, sys)
	body := func(name, orgID string, alloc api.ResourceAllocation) api.TmVDC {
		return api.TmVDC{Name: name, Org: &api.Ref{ID: orgID}, Region: &api.Ref{ID: "urn:vcloud:region:ignored"},
			ZoneResourceAllocation: []api.ZoneAllocation{{ResourceAllocation: alloc}}}
	}
	var made api.TmVDC
	sys.must(t, "POST", "/cloudapi/vcf/virtualDatacenters", body("tm1", a.org.ID, api.ResourceAllocation{MemoryLimitMiB: 2048}),
		http.StatusCreated, &made)
	if made.Status != "READY" || made.Org == nil || made.Org.ID != a.org.ID || made.Region != nil ||
		len(made.ZoneResourceAllocation) != 1 || made.ZoneResourceAllocation[0].ResourceAllocation.MemoryLimitMiB != 2048 {
		t.Fatalf("created: %+v", made)
	}
	var v api.VDC
	a.user.must(t, "GET", "/cloudapi/1.0.0/vdcs/"+made.ID, nil, http.StatusOK, &v)
	if v.ComputeCapacity.Memory.Limit != 2048 || v.ComputeCapacity.CPU.Limit != 0 {
		t.Errorf("the same VDC in CloudAPI 1.0.0: %+v", v)
	}
	if !hardIs(quota(t, v.Namespace), "limits.memory", "2Gi") {
		t.Errorf("quota: %v", quota(t, v.Namespace).Spec.Hard)
	}
	for _, name := range []string{"tm2", "tm3"} {
		sys.must(t, "POST", "/api/admin/org/"+a.org.ID+"/vdcs", vdcBody(name, 0, 0, 0), http.StatusCreated, nil)
	}

	list := func(c *client, query string) api.Paged[api.TmVDC] {
		t.Helper()
		var page api.Paged[api.TmVDC]
		c.must(t, "GET", "/cloudapi/vcf/virtualDatacenters"+query, nil, http.StatusOK, &page)
		return page
	}
	if p := list(a.user, "?pageSize=1&page=2"); p.ResultTotal != 3 || p.PageCount != 3 || len(p.Values) != 1 || p.Values[0].Name != "tm2" {
		t.Errorf("a's second page of one: %+v", p)
	}
	// The filters the SDK's GetRegionQuotaByName and GetRegionQuotaByNameAndOrgId send.
	if p := list(a.user, "?filter=name==tm1"); p.ResultTotal != 1 || p.Values[0].ID != made.ID {
		t.Errorf("by name: %+v", p)
	}
	if p := list(sys, "?filter="+url.QueryEscape("org.id=="+a.org.ID+";name==tm3")); p.ResultTotal != 1 || p.Values[0].Org.ID != a.org.ID {
		t.Errorf("by organization and name: %+v", p)
	}
	if p := list(b.user, ""); p.ResultTotal != 0 {
		t.Errorf("b sees a's VDCs: %+v", p)
	}
	if p := list(sys.in(b.org.ID), ""); p.ResultTotal != 0 {
		t.Errorf("the system administrator in b's context sees a's VDCs: %+v", p)
	}
	a.user.must(t, "GET", "/cloudapi/vcf/virtualDatacenters?filter=region.id==x", nil, http.StatusBadRequest, nil)

	var one api.TmVDC
	a.user.must(t, "GET", "/cloudapi/vcf/virtualDatacenters/"+made.ID, nil, http.StatusOK, &one)
	if one.ID != made.ID || one.Name != "tm1" {
		t.Errorf("by id: %+v", one)
	}
	var e api.Error
	b.admin.must(t, "GET", "/cloudapi/vcf/virtualDatacenters/"+made.ID, nil, http.StatusForbidden, &e)
	if e.MinorErrorCode != api.CodeForbidden {
		t.Errorf("another organization's VDC: %+v", e)
	}
	a.user.must(t, "GET", "/cloudapi/vcf/virtualDatacenters/urn:vcloud:vdc:00000000-0000-0000-0000-000000000000", nil, http.StatusForbidden, nil)

	// Creating follows the admin API's rules; what ssvirt cannot keep is refused.
	a.admin.must(t, "POST", "/cloudapi/vcf/virtualDatacenters", body("mine", a.org.ID, api.ResourceAllocation{}), http.StatusForbidden, nil)
	b.admin.must(t, "POST", "/cloudapi/vcf/virtualDatacenters", body("theirs", a.org.ID, api.ResourceAllocation{}), http.StatusForbidden, nil)
	sys.must(t, "POST", "/cloudapi/vcf/virtualDatacenters", body("cpu", a.org.ID, api.ResourceAllocation{CPULimitMHz: 1000}), http.StatusBadRequest, nil)
	sys.must(t, "POST", "/cloudapi/vcf/virtualDatacenters", api.TmVDC{Name: "noorg"}, http.StatusBadRequest, nil)
	sys.must(t, "POST", "/cloudapi/vcf/virtualDatacenters", body("tm1", a.org.ID, api.ResourceAllocation{}), http.StatusConflict, nil)

	// Deleting: only system administrators, and only what the caller sees.
	b.admin.must(t, "DELETE", "/cloudapi/vcf/virtualDatacenters/"+made.ID, nil, http.StatusForbidden, nil)
	a.admin.must(t, "DELETE", "/cloudapi/vcf/virtualDatacenters/"+made.ID, nil, http.StatusForbidden, nil)
	if status := sys.do(t, "DELETE", "/cloudapi/vcf/virtualDatacenters/"+made.ID, nil, nil); status != http.StatusNoContent && status != http.StatusAccepted {
		t.Fatalf("delete: %d", status)
	}
	eventually(t, "the deleted VDC is gone", 30*time.Second, func() (bool, string) {
		status := a.user.do(t, "GET", "/cloudapi/vcf/virtualDatacenters/"+made.ID, nil, nil)
		return status == http.StatusForbidden, http.StatusText(status)
	})
}

// Content libraries are the catalogs and their items the catalog items: an organization's own only, a library
// created by an administrator (or a system administrator in a tenant context), what a catalog cannot be refused.
func TestTmContentLibraries(t *testing.T) {
	sys := sysadmin(t)
	a, b := newTenant(t, sys), newTenant(t, sys)
	var lib, other api.ContentLibrary
	a.admin.must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: "lib", StorageClasses: []api.Ref{{ID: "x"}}},
		http.StatusCreated, &lib)
	if lib.LibraryType != "TENANT" || !lib.AutoAttach || lib.Org == nil || lib.Org.ID != a.org.ID || lib.Status != "READY" || lib.CreationDate == "" {
		t.Fatalf("created: %+v", lib)
	}
	sys.in(b.org.ID).must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: "lib"}, http.StatusCreated, &other)
	if other.Org == nil || other.Org.ID != b.org.ID {
		t.Fatalf("created in b's context: %+v", other)
	}
	a.admin.must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: "second"}, http.StatusCreated, nil)
	a.admin.must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: "lib"}, http.StatusConflict, nil)
	a.user.must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: "users"}, http.StatusForbidden, nil)
	a.admin.must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: "x", Org: &api.Ref{ID: b.org.ID}}, http.StatusForbidden, nil)
	for _, bad := range []api.ContentLibrary{{Name: "s", IsShared: true}, {Name: "p", LibraryType: "PROVIDER"}, {Name: "u", IsSubscribed: true}} {
		a.admin.must(t, "POST", "/cloudapi/vcf/contentLibraries", bad, http.StatusBadRequest, nil)
	}

	var libs api.Paged[api.ContentLibrary]
	a.user.must(t, "GET", "/cloudapi/vcf/contentLibraries?pageSize=1", nil, http.StatusOK, &libs)
	if libs.ResultTotal != 2 || libs.PageCount != 2 || len(libs.Values) != 1 || libs.Values[0].ID != lib.ID {
		t.Errorf("a's first page of one: %+v", libs)
	}
	a.user.must(t, "GET", "/cloudapi/vcf/contentLibraries?filter=name==lib", nil, http.StatusOK, &libs)
	if libs.ResultTotal != 1 || libs.Values[0].ID != lib.ID {
		t.Errorf("a's by name: %+v", libs)
	}
	var got api.ContentLibrary
	a.user.must(t, "GET", "/cloudapi/vcf/contentLibraries/"+lib.ID, nil, http.StatusOK, &got)
	if got.ID != lib.ID || got.Name != "lib" {
		t.Errorf("by id: %+v", got)
	}
	b.user.must(t, "GET", "/cloudapi/vcf/contentLibraries/"+lib.ID, nil, http.StatusForbidden, nil)

	// Items: every Template in every library the caller sees; one library's by its id, as the 1.0.0 catalog's.
	var catItems api.Paged[api.CatalogItem]
	a.user.must(t, "GET", "/cloudapi/1.0.0/catalogs/"+lib.ID+"/catalogItems?pageSize=128", nil, http.StatusOK, &catItems)
	items := func(c *client, query string) api.Paged[api.ContentLibraryItem] {
		t.Helper()
		var page api.Paged[api.ContentLibraryItem]
		c.must(t, "GET", "/cloudapi/vcf/contentLibraryItems"+query, nil, http.StatusOK, &page)
		return page
	}
	if catItems.ResultTotal == 0 {
		t.Fatal("the catalog has no items")
	}
	if p := items(a.user, "?pageSize=128"); p.ResultTotal != 2*catItems.ResultTotal {
		t.Errorf("a's items of two libraries: %d, want %d", p.ResultTotal, 2*catItems.ResultTotal)
	}
	p := items(a.user, "?pageSize=1&filter=contentLibrary.id=="+lib.ID)
	if p.ResultTotal != catItems.ResultTotal || p.PageCount != catItems.ResultTotal || len(p.Values) != 1 {
		t.Fatalf("one library's items, by one: %+v", p)
	}
	item := p.Values[0]
	if item.ItemType != "TEMPLATE" || item.ContentLibrary.ID != lib.ID || item.ContentLibrary.Name != "lib" || item.Org.ID != a.org.ID {
		t.Errorf("item: %+v", item)
	}
	if p := items(a.user, "?filter="+url.QueryEscape("contentLibrary.id=="+lib.ID+";name=="+item.Name)); p.ResultTotal != 1 || p.Values[0].ID != item.ID {
		t.Errorf("by library and name: %+v", p)
	}
	var oneItem api.ContentLibraryItem
	a.user.must(t, "GET", "/cloudapi/vcf/contentLibraryItems/"+item.ID, nil, http.StatusOK, &oneItem)
	if !reflect.DeepEqual(oneItem, item) {
		t.Errorf("by id: %+v, listed %+v", oneItem, item)
	}
	b.user.must(t, "GET", "/cloudapi/vcf/contentLibraryItems/"+item.ID, nil, http.StatusForbidden, nil)
	for _, it := range items(b.user, "?pageSize=128").Values {
		if it.ContentLibrary.ID != other.ID {
			t.Errorf("b lists %+v", it)
		}
	}
	a.user.must(t, "GET", "/cloudapi/vcf/contentLibraryItems?filter=version==1", nil, http.StatusBadRequest, nil)

	// Deleting, with the SDK's parameters: administrators of the library's organization only.
	b.admin.must(t, "DELETE", "/cloudapi/vcf/contentLibraries/"+lib.ID+"?force=false&recursive=false", nil, http.StatusForbidden, nil)
	a.user.must(t, "DELETE", "/cloudapi/vcf/contentLibraries/"+lib.ID+"?force=false&recursive=false", nil, http.StatusForbidden, nil)
	a.admin.must(t, "DELETE", "/cloudapi/vcf/contentLibraries/"+lib.ID+"?force=false&recursive=false", nil, http.StatusNoContent, nil)
	a.user.must(t, "GET", "/cloudapi/vcf/contentLibraries/"+lib.ID, nil, http.StatusForbidden, nil)
	a.user.must(t, "GET", "/cloudapi/vcf/contentLibraryItems/"+item.ID, nil, http.StatusForbidden, nil)
}
