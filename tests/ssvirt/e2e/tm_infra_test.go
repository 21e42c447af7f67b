//go:build e2e

package e2e_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
)

// The Tenant Manager's infrastructure is the cluster: one region (named by --region-name, "kubernetes" here),
// one zone, supervisor, vCenter and storage class, each found by the lookups Cloud Director's clients send
// (by name, and by name within the region or vCenter) and read by id, and each naming the others as a Region
// Quota names them. Tenants see the region, zone and storage class; supervisors and vCenters are the
// provider's.
func TestTmInfrastructure(t *testing.T) {
	sys := sysadmin(t)
	a := newTenant(t, sys)

	var regions api.Paged[api.Region]
	sys.must(t, "GET", "/cloudapi/vcf/regions/?filter=name==kubernetes", nil, http.StatusOK, &regions)
	if regions.ResultTotal != 1 || regions.Values[0].Name != "kubernetes" || regions.Values[0].NsxManager == nil || !regions.Values[0].IsEnabled || regions.Values[0].Status != "READY" {
		t.Fatalf("regions by name: %+v", regions)
	}
	region := regions.Values[0]
	var byID api.Region
	a.user.must(t, "GET", "/cloudapi/vcf/regions/"+region.ID, nil, http.StatusOK, &byID)
	if byID.ID != region.ID || len(byID.Supervisors) != 1 {
		t.Errorf("region by id: %+v", byID)
	}
	sys.must(t, "GET", "/cloudapi/vcf/regions/?filter=name==elsewhere", nil, http.StatusOK, &regions)
	if regions.ResultTotal != 0 {
		t.Errorf("a region by another name: %+v", regions)
	}
	sys.must(t, "GET", "/cloudapi/vcf/regions/urn:vcloud:region:00000000-0000-0000-0000-000000000001", nil, http.StatusForbidden, nil)

	var vcenters api.Paged[api.VCenter]
	sys.must(t, "GET", "/cloudapi/1.0.0/virtualCenters/?filter=name==kubernetes-vcenter", nil, http.StatusOK, &vcenters)
	if vcenters.ResultTotal != 1 || !vcenters.Values[0].IsConnected || vcenters.Values[0].ListenerState != "CONNECTED" {
		t.Fatalf("vCenters by name: %+v", vcenters)
	}
	vc := vcenters.Values[0]
	a.admin.must(t, "GET", "/cloudapi/1.0.0/virtualCenters/", nil, http.StatusForbidden, nil)
	a.admin.must(t, "GET", "/cloudapi/1.0.0/virtualCenters/"+vc.VcID, nil, http.StatusForbidden, nil)

	var supervisors api.Paged[api.Supervisor]
	sys.must(t, "GET", "/cloudapi/vcf/supervisors/?filter="+url.QueryEscape("name==kubernetes-supervisor;virtualCenter.id=="+vc.VcID),
		nil, http.StatusOK, &supervisors)
	if supervisors.ResultTotal != 1 || supervisors.Values[0].Region != (api.Ref{Name: region.Name, ID: region.ID}) ||
		supervisors.Values[0].SupervisorID != region.Supervisors[0].ID {
		t.Fatalf("supervisors by name and vCenter: %+v", supervisors)
	}
	a.admin.must(t, "GET", "/cloudapi/vcf/supervisors/"+supervisors.Values[0].SupervisorID, nil, http.StatusForbidden, nil)

	var zones api.Paged[api.Zone]
	a.user.must(t, "GET", "/cloudapi/vcf/zones/?filter="+url.QueryEscape("name==kubernetes-zone;region.id=="+region.ID), nil, http.StatusOK, &zones)
	if zones.ResultTotal != 1 || zones.Values[0].Region.ID != region.ID {
		t.Fatalf("zones by name in the region: %+v", zones)
	}
	var zone api.Zone
	sys.must(t, "GET", "/cloudapi/vcf/zones/"+zones.Values[0].ID, nil, http.StatusOK, &zone)

	var classes api.Paged[api.StorageClass]
	a.admin.must(t, "GET", "/cloudapi/vcf/storageClasses/?filter="+url.QueryEscape("(name==kubernetes-storage;region.id=="+region.ID+")"),
		nil, http.StatusOK, &classes)
	if classes.ResultTotal != 1 || len(classes.Values[0].Zones) != 1 || classes.Values[0].Zones[0].ID != zone.ID {
		t.Fatalf("storage classes by name in the region: %+v", classes)
	}
	sys.must(t, "GET", "/cloudapi/vcf/storageClasses/"+classes.Values[0].ID, nil, http.StatusOK, nil)
	sys.must(t, "GET", "/cloudapi/vcf/storageClasses/?filter=capacity==1", nil, http.StatusBadRequest, nil)

	// A Region Quota names the very objects these reads answer.
	var made api.TmVDC
	sys.must(t, "POST", "/cloudapi/vcf/virtualDatacenters", api.TmVDC{Name: "infra", Org: &api.Ref{ID: a.org.ID},
		Region: &api.Ref{ID: region.ID}, Supervisors: []api.Ref{{ID: supervisors.Values[0].SupervisorID}},
		ZoneResourceAllocation: []api.ZoneAllocation{{Zone: &api.Ref{ID: zone.ID}}}}, http.StatusCreated, &made)
	if made.Region.ID != region.ID || made.ZoneResourceAllocation[0].Zone.ID != zone.ID {
		t.Errorf("the Region Quota's region and zone: %+v", made)
	}
}
