//go:build e2e

package e2e_test

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
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
		return api.TmVDC{Name: name, Org: &api.Ref{ID: orgID},
			ZoneResourceAllocation: []api.ZoneAllocation{{ResourceAllocation: alloc}}}
	}
	var made api.TmVDC
	sys.must(t, "POST", "/cloudapi/vcf/virtualDatacenters", body("tm1", a.org.ID, api.ResourceAllocation{MemoryLimitMiB: 2048}),
		http.StatusCreated, &made)
	if made.Status != "READY" || made.Org == nil || made.Org.ID != a.org.ID ||
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

// A Region Quota names the region it is in (the cluster: one region, with one zone and one supervisor), the
// same on every answer, so that a client that stores region_id reads back what it stored; one naming another
// region, zone or supervisor is refused. PUT changes what the Tenant Manager's shape holds and answers it as
// written, leaving the limits it cannot carry alone; a content library is renamed with PUT.
func TestTmRegionQuotaRegionAndUpdate(t *testing.T) {
	sys := sysadmin(t)
	a := newTenant(t, sys)
	var made api.TmVDC
	sys.must(t, "POST", "/cloudapi/vcf/virtualDatacenters", api.TmVDC{Name: "rq", Org: &api.Ref{ID: a.org.ID}},
		http.StatusCreated, &made)
	if made.Region == nil || made.Region.ID == "" || made.Region.Name == "" || len(made.Supervisors) != 1 ||
		len(made.ZoneResourceAllocation) != 1 || made.ZoneResourceAllocation[0].Zone == nil || made.ZoneResourceAllocation[0].Zone.ID == "" {
		t.Fatalf("a Region Quota without its region, zone or supervisor: %+v", made)
	}
	region, zone, supervisor := *made.Region, *made.ZoneResourceAllocation[0].Zone, made.Supervisors[0]
	var listed api.Paged[api.TmVDC]
	a.user.must(t, "GET", "/cloudapi/vcf/virtualDatacenters", nil, http.StatusOK, &listed)
	var got api.TmVDC
	a.user.must(t, "GET", "/cloudapi/vcf/virtualDatacenters/"+made.ID, nil, http.StatusOK, &got)
	if len(listed.Values) != 1 || *listed.Values[0].Region != region || *got.Region != region || *got.ZoneResourceAllocation[0].Zone != zone {
		t.Errorf("the region differs between answers: created %+v, listed %+v, read %+v", region, listed.Values, got.Region)
	}
	// Named as the answers name it, the region, zone and supervisor are taken; anything else is refused.
	named := api.TmVDC{Name: "rq2", Org: &api.Ref{ID: a.org.ID}, Region: &region, Supervisors: []api.Ref{supervisor},
		ZoneResourceAllocation: []api.ZoneAllocation{{Zone: &zone, ResourceAllocation: api.ResourceAllocation{MemoryLimitMiB: 256}}}}
	sys.must(t, "POST", "/cloudapi/vcf/virtualDatacenters", named, http.StatusCreated, nil)
	other := api.Ref{ID: "urn:vcloud:region:00000000-0000-0000-0000-00000000000f"}
	elsewhere := named
	elsewhere.Name, elsewhere.Region = "rq3", &other
	var e api.Error
	sys.must(t, "POST", "/cloudapi/vcf/virtualDatacenters", elsewhere, http.StatusBadRequest, &e)
	if e.Message == "" || !strings.Contains(e.Message, region.ID) {
		t.Errorf("another region: %+v, want a message naming %s", e, region.ID)
	}

	// PUT what was read, changed: description, isEnabled and memory; the CPU limit set through CloudAPI 1.0.0
	// stays.
	var v api.VDC
	sys.must(t, "GET", "/api/admin/org/"+a.org.ID+"/vdcs/"+made.ID, nil, http.StatusOK, &v)
	v.ComputeCapacity.CPU.Limit = 1500
	sys.must(t, "PUT", "/api/admin/org/"+a.org.ID+"/vdcs/"+made.ID, v, http.StatusOK, nil)
	off := false
	change := got
	change.Description, change.IsEnabled = "changed", &off
	change.ZoneResourceAllocation[0].ResourceAllocation.MemoryLimitMiB = 1024
	var put api.TmVDC
	a.admin.must(t, "PUT", "/cloudapi/vcf/virtualDatacenters/"+made.ID, change, http.StatusForbidden, nil)
	sys.must(t, "PUT", "/cloudapi/vcf/virtualDatacenters/"+made.ID, change, http.StatusOK, &put)
	a.user.must(t, "GET", "/cloudapi/vcf/virtualDatacenters/"+made.ID, nil, http.StatusOK, &got)
	for _, answer := range []api.TmVDC{put, got} {
		if answer.Description != "changed" || answer.IsEnabled == nil || *answer.IsEnabled ||
			answer.ZoneResourceAllocation[0].ResourceAllocation.MemoryLimitMiB != 1024 || *answer.Region != region {
			t.Errorf("after PUT: %+v", answer)
		}
	}
	sys.must(t, "GET", "/api/admin/org/"+a.org.ID+"/vdcs/"+made.ID, nil, http.StatusOK, &v)
	if v.ComputeCapacity.CPU.Limit != 1500 || v.ComputeCapacity.Memory.Limit != 1024 || *v.IsEnabled {
		t.Errorf("the same VDC in CloudAPI 1.0.0 after the Tenant Manager's PUT: %+v", v)
	}
	renamed := change
	renamed.Name = "other"
	sys.must(t, "PUT", "/cloudapi/vcf/virtualDatacenters/"+made.ID, renamed, http.StatusBadRequest, nil)
	moved := change
	moved.Region = &other
	sys.must(t, "PUT", "/cloudapi/vcf/virtualDatacenters/"+made.ID, moved, http.StatusBadRequest, nil)

	var lib api.ContentLibrary
	a.admin.must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: "lib"}, http.StatusCreated, &lib)
	a.admin.must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: "taken"}, http.StatusCreated, nil)
	lib.Name, lib.Description = "lib2", "renamed"
	var libPut api.ContentLibrary
	a.admin.must(t, "PUT", "/cloudapi/vcf/contentLibraries/"+lib.ID, lib, http.StatusOK, &libPut)
	if libPut.Name != "lib2" || libPut.Description != "renamed" || libPut.ID != lib.ID {
		t.Errorf("after PUT: %+v", libPut)
	}
	lib.Name = "taken"
	a.admin.must(t, "PUT", "/cloudapi/vcf/contentLibraries/"+lib.ID, lib, http.StatusConflict, nil)
	a.user.must(t, "PUT", "/cloudapi/vcf/contentLibraries/"+lib.ID, libPut, http.StatusForbidden, nil)
}

// Content libraries are the catalogs and their items the catalog items: an organization's own only, a library
// created by an administrator (or a system administrator in a tenant context), what a catalog cannot be refused.
func TestTmContentLibraries(t *testing.T) {
	sys := sysadmin(t)
	a, b := newTenant(t, sys), newTenant(t, sys)
	var lib, other api.ContentLibrary
	a.admin.must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: "lib"},
		http.StatusCreated, &lib)
	if lib.LibraryType != "TENANT" || len(lib.StorageClasses) != 1 || !lib.AutoAttach || lib.Org == nil || lib.Org.ID != a.org.ID || lib.Status != "READY" || lib.CreationDate == "" {
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
	a.admin.must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: "p", LibraryType: "PROVIDER"}, http.StatusForbidden, nil)
	for _, bad := range []api.ContentLibrary{{Name: "s", IsShared: true}, {Name: "u", IsSubscribed: true},
		{Name: "sc", StorageClasses: []api.Ref{{ID: "x"}}}} {
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

// A system administrator's library of no organization (terraform-provider-vcd sends none) is a provider library:
// the System organization's, seen and changed by system administrators only, its items the shared Templates.
func TestTmProviderLibrary(t *testing.T) {
	sys := sysadmin(t)
	a := newTenant(t, sys)
	var orgs api.Paged[api.Org]
	sys.must(t, "GET", "/cloudapi/1.0.0/orgs?filter=name==System", nil, http.StatusOK, &orgs)
	if len(orgs.Values) != 1 {
		t.Fatalf("the System org: %+v", orgs)
	}
	system := orgs.Values[0].ID
	name := unique("plib")
	var lib api.ContentLibrary
	sys.must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: name, Description: "d"}, http.StatusCreated, &lib)
	if lib.LibraryType != "PROVIDER" || lib.Org == nil || lib.Org.ID != system || lib.Org.Name != "System" || lib.Description != "d" ||
		len(lib.StorageClasses) != 1 || lib.Status != "READY" {
		t.Fatalf("created: %+v", lib)
	}
	sys.must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: name}, http.StatusConflict, nil)
	// The same name in an organization is another library.
	a.admin.must(t, "POST", "/cloudapi/vcf/contentLibraries", api.ContentLibrary{Name: name}, http.StatusCreated, nil)
	for _, bad := range []api.ContentLibrary{
		{Name: unique("t"), LibraryType: "TENANT"},                                // a tenant library needs its organization
		{Name: unique("t"), LibraryType: "TENANT", Org: &api.Ref{ID: system}},     // ... other than System
		{Name: unique("p"), LibraryType: "PROVIDER", Org: &api.Ref{ID: a.org.ID}}, // a provider library is System's
	} {
		sys.must(t, "POST", "/cloudapi/vcf/contentLibraries", bad, http.StatusBadRequest, nil)
	}

	var got api.ContentLibrary
	sys.must(t, "GET", "/cloudapi/vcf/contentLibraries/"+lib.ID, nil, http.StatusOK, &got)
	if got.ID != lib.ID || got.LibraryType != "PROVIDER" {
		t.Errorf("by id: %+v", got)
	}
	var libs api.Paged[api.ContentLibrary]
	sys.must(t, "GET", "/cloudapi/vcf/contentLibraries?filter=name=="+name, nil, http.StatusOK, &libs)
	if libs.ResultTotal != 2 {
		t.Errorf("System's libraries named %s: %+v, want the provider's and a's", name, libs)
	}
	a.admin.must(t, "GET", "/cloudapi/vcf/contentLibraries?filter=name=="+name, nil, http.StatusOK, &libs)
	if libs.ResultTotal != 1 || libs.Values[0].ID == lib.ID {
		t.Errorf("a's libraries named %s: %+v, want its own only", name, libs)
	}
	a.admin.must(t, "GET", "/cloudapi/vcf/contentLibraries/"+lib.ID, nil, http.StatusForbidden, nil)
	a.admin.must(t, "DELETE", "/cloudapi/vcf/contentLibraries/"+lib.ID, nil, http.StatusForbidden, nil)

	var items api.Paged[api.ContentLibraryItem]
	sys.must(t, "GET", "/cloudapi/vcf/contentLibraryItems?pageSize=128&filter=contentLibrary.id=="+lib.ID, nil, http.StatusOK, &items)
	if items.ResultTotal == 0 || items.Values[0].Org == nil || items.Values[0].Org.ID != system {
		t.Errorf("the provider library's items: %+v", items)
	}

	// What the SDK sends back on update: the object as read.
	got.Description = "changed"
	var put api.ContentLibrary
	sys.must(t, "PUT", "/cloudapi/vcf/contentLibraries/"+lib.ID, got, http.StatusOK, &put)
	if put.Description != "changed" || put.LibraryType != "PROVIDER" || put.Org.ID != system {
		t.Errorf("after PUT: %+v", put)
	}
	retyped := got
	retyped.LibraryType = "TENANT"
	sys.must(t, "PUT", "/cloudapi/vcf/contentLibraries/"+lib.ID, retyped, http.StatusBadRequest, nil)

	sys.must(t, "DELETE", "/cloudapi/vcf/contentLibraries/"+lib.ID, nil, http.StatusNoContent, nil)
	sys.must(t, "GET", "/cloudapi/vcf/contentLibraries/"+lib.ID, nil, http.StatusForbidden, nil)
}
