package api

import (
	"encoding/json"
	"testing"
)

// A Tenant Manager VDC becomes a VDC with the memory limit of its one zone; what a Kubernetes quota cannot keep
// (MHz, reservations, several zones) or the server sets is refused rather than dropped.
func TestTmVDCToVDC(t *testing.T) {
	inf := infraOf("east")
	zone := func(a ResourceAllocation) []ZoneAllocation {
		return []ZoneAllocation{{ResourceAllocation: a, Zone: &inf.zone}}
	}
	got, err := TmVDC{Name: "web", Description: "d", Region: &inf.region, Supervisors: []Ref{inf.supervisor},
		ZoneResourceAllocation: zone(ResourceAllocation{MemoryLimitMiB: 512})}.vdc(inf)
	if err != nil || got.Name != "web" || got.Description != "d" || got.ComputeCapacity.Memory.Limit != 512 || got.ComputeCapacity.CPU.Limit != 0 {
		t.Errorf("vdc() = %+v, %v", got, err)
	}
	if got, err := (TmVDC{Name: "bare"}).vdc(inf); err != nil || got.ComputeCapacity.Memory.Limit != 0 {
		t.Errorf("without allocation: %+v, %v", got, err)
	}
	for name, in := range map[string]TmVDC{
		"cpu limit":          {Name: "x", ZoneResourceAllocation: zone(ResourceAllocation{CPULimitMHz: 1})},
		"cpu reservation":    {Name: "x", ZoneResourceAllocation: zone(ResourceAllocation{CPUReservationMHz: 1})},
		"memory reservation": {Name: "x", ZoneResourceAllocation: zone(ResourceAllocation{MemoryReservationMiB: 1})},
		"two zones":          {Name: "x", ZoneResourceAllocation: append(zone(ResourceAllocation{}), zone(ResourceAllocation{})...)},
		"another region":     {Name: "x", Region: &Ref{ID: "urn:vcloud:region:00000000-0000-0000-0000-000000000001"}},
		"another supervisor": {Name: "x", Supervisors: []Ref{{ID: "urn:vcloud:supervisor:1"}}},
		"another zone":       {Name: "x", ZoneResourceAllocation: []ZoneAllocation{{Zone: &Ref{ID: "urn:vcloud:zone:1"}}}},
	} {
		if _, err := in.vdc(inf); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A content library becomes a catalog; what a catalog is not (shared, subscribed, the provider's, in projects)
// is refused, and autoAttach, which the SDK always sends, is not looked at.
func TestContentLibraryToCatalog(t *testing.T) {
	org := &Ref{ID: "urn:vcloud:org:1"}
	inf := infraOf("east")
	got, err := ContentLibrary{Name: "lib", Description: "d", Org: org, LibraryType: "TENANT", StorageClasses: []Ref{inf.storageClass},
		SubscriptionConfig: json.RawMessage("null")}.catalog(inf)
	if err != nil || got.Name != "lib" || got.Description != "d" || got.Org != org {
		t.Errorf("catalog() = %+v, %v", got, err)
	}
	for name, in := range map[string]ContentLibrary{
		"unknown type":  {Name: "x", LibraryType: "SUBSCRIBED"},
		"shared":        {Name: "x", IsShared: true},
		"subscribed":    {Name: "x", IsSubscribed: true},
		"subscription":  {Name: "x", SubscriptionConfig: json.RawMessage(`{"subscriptionUrl":"https://x"}`)},
		"projects":      {Name: "x", IsProjectScoped: true},
		"permissions":   {Name: "x", AllProjectsPermission: "READ_ONLY"},
		"id":            {Name: "x", ID: "urn:vcloud:catalog:1"},
		"version":       {Name: "x", VersionNumber: 2},
		"storage class": {Name: "x", StorageClasses: []Ref{{ID: "urn:vcloud:storageClass:00000000-0000-0000-0000-000000000001"}}},
	} {
		if _, err := in.catalog(inf); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
