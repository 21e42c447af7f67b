package api

import (
	"encoding/json"
	"net/http"
)

// The Tenant Manager's infrastructure as ssvirt has it (see infra): one region, zone, supervisor, vCenter and
// storage class, read-only. Clients such as terraform-provider-vcd look them up by name before they create a
// Region Quota or a content library, so each list takes the filters those lookups send.

// Region is the Tenant Manager's region: here the Kubernetes cluster.
type Region struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	NsxManager      *Ref     `json:"nsxManager"` // clients read its id unchecked: never null
	IsEnabled       bool     `json:"isEnabled"`
	Status          string   `json:"status"`
	Supervisors     []Ref    `json:"supervisors"`
	StoragePolicies []string `json:"storagePolicies"`
}

// Zone is a region's zone. The capacities are not counted (a Kubernetes cluster has no MHz): they read 0.
type Zone struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Region Ref    `json:"region"`
}

// Supervisor is the Tenant Manager's supervisor cluster: the cluster again.
type Supervisor struct {
	SupervisorID  string `json:"supervisorId"`
	Name          string `json:"name"`
	Region        Ref    `json:"region"`
	VirtualCenter Ref    `json:"virtualCenter"`
}

// VCenter is CloudAPI's vCenter server (/cloudapi/1.0.0/virtualCenters), which backs the supervisor. ssvirt has
// no vCenter to connect to: the one it names is always connected, and has no URL or user.
type VCenter struct {
	VcID          string `json:"vcId"`
	Name          string `json:"name"`
	Description   string `json:"description"`
	URL           string `json:"url"`
	Username      string `json:"username"`
	IsEnabled     bool   `json:"isEnabled"`
	IsConnected   bool   `json:"isConnected"`
	Mode          string `json:"mode"`
	ListenerState string `json:"listenerState"`
	ClusterHealth string `json:"clusterHealthStatus"`
}

// StorageClass is the region's storage class, which content libraries and VDCs name. Templates bring their own
// storage (their DataVolumes name it), so this one stands for whatever they name.
type StorageClass struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Region Ref    `json:"region"`
	Zones  []Ref  `json:"zones"`
}

func (inf infra) regionOut() Region {
	return Region{ID: inf.region.ID, Name: inf.region.Name, Description: "the Kubernetes cluster ssvirt-api runs against",
		NsxManager: &inf.network, IsEnabled: true, Status: statusReady, Supervisors: []Ref{inf.supervisor}, StoragePolicies: []string{inf.storageClass.Name}}
}

func (inf infra) zoneOut() Zone {
	return Zone{ID: inf.zone.ID, Name: inf.zone.Name, Region: inf.region}
}

func (inf infra) supervisorOut() Supervisor {
	return Supervisor{SupervisorID: inf.supervisor.ID, Name: inf.supervisor.Name, Region: inf.region, VirtualCenter: inf.vcenter}
}

func (inf infra) vcenterOut() VCenter {
	return VCenter{VcID: inf.vcenter.ID, Name: inf.vcenter.Name, Description: "stands for the Kubernetes cluster's control plane",
		IsEnabled: true, IsConnected: true, Mode: "IAAS", ListenerState: "CONNECTED", ClusterHealth: "GREEN"}
}

func (inf infra) storageClassOut() StorageClass {
	return StorageClass{ID: inf.storageClass.ID, Name: inf.storageClass.Name, Region: inf.region, Zones: []Ref{inf.zone}}
}

// infraObject is one read-only infrastructure object: its id, its filterable properties and its answer.
type infraObject struct {
	id     string
	props  map[string]string
	answer any
	// provider objects (supervisors, vCenters) are a system administrator's; tenants see regions, zones and
	// storage classes, which their VDCs and libraries name.
	provider bool
}

// MarshalJSON answers the object as its API shape: lists page through infraObjects.
func (o infraObject) MarshalJSON() ([]byte, error) { return json.Marshal(o.answer) }

func (inf infra) regionObject() infraObject {
	return infraObject{id: inf.region.ID, answer: inf.regionOut(), props: map[string]string{
		"id": inf.region.ID, "name": inf.region.Name, "isEnabled": "true", "status": statusReady}}
}

func (inf infra) zoneObject() infraObject {
	return infraObject{id: inf.zone.ID, answer: inf.zoneOut(), props: map[string]string{
		"id": inf.zone.ID, "name": inf.zone.Name, "region.id": inf.region.ID}}
}

func (inf infra) supervisorObject() infraObject {
	return infraObject{id: inf.supervisor.ID, answer: inf.supervisorOut(), provider: true, props: map[string]string{
		"supervisorId": inf.supervisor.ID, "name": inf.supervisor.Name, "region.id": inf.region.ID,
		"virtualCenter.id": inf.vcenter.ID}}
}

func (inf infra) vcenterObject() infraObject {
	return infraObject{id: inf.vcenter.ID, answer: inf.vcenterOut(), provider: true, props: map[string]string{
		"vcId": inf.vcenter.ID, "name": inf.vcenter.Name, "isEnabled": "true"}}
}

func (inf infra) storageClassObject() infraObject {
	return infraObject{id: inf.storageClass.ID, answer: inf.storageClassOut(), props: map[string]string{
		"id": inf.storageClass.ID, "name": inf.storageClass.Name, "region.id": inf.region.ID}}
}

// infraFields are an object's filterable properties: all text, compared as the client spells them (URNs in
// the answer's spelling).
func infraFields(o infraObject) fields {
	fs := fields{}
	for name := range o.props {
		fs[name] = text("")
	}
	return fs
}

// listInfra answers the one object as a list, filtered and paged as any list is.
func listInfra(of func(infra) infraObject) func(*Server, http.ResponseWriter, *http.Request) error {
	return func(s *Server, w http.ResponseWriter, r *http.Request) error {
		o := of(s.infra())
		if o.provider && !principal(r).sysAdmin() {
			return forbidden("only system administrators see the Tenant Manager's provider infrastructure")
		}
		return writeWindow(w, r, infraFields(o), func() ([]infraObject, error) { return []infraObject{o}, nil },
			func(o infraObject, name string) string { return o.props[name] })
	}
}

// getInfra answers the object whose id the path names; any other id (or a tenant asking for a provider object)
// is not there, as Cloud Director answers it.
func getInfra(param, what string, of func(infra) infraObject) func(*Server, http.ResponseWriter, *http.Request) error {
	return func(s *Server, w http.ResponseWriter, r *http.Request) error {
		o := of(s.infra())
		if r.PathValue(param) != o.id || o.provider && !principal(r).sysAdmin() {
			return noAccess(what)
		}
		writeJSON(w, http.StatusOK, o.answer)
		return nil
	}
}

// infraRoutes are the read-only infrastructure paths.
func infraRoutes() []Route {
	type kind struct {
		path, param, what string
		of                func(infra) infraObject
	}
	kinds := []kind{
		{"/cloudapi/vcf/regions", "regionId", "region", infra.regionObject},
		{"/cloudapi/vcf/zones", "zoneId", "zone", infra.zoneObject},
		{"/cloudapi/vcf/supervisors", "supervisorId", "supervisor", infra.supervisorObject},
		{"/cloudapi/vcf/storageClasses", "storageClassId", "storage class", infra.storageClassObject},
		{"/cloudapi/1.0.0/virtualCenters", "vcId", "vCenter server", infra.vcenterObject},
	}
	var out []Route
	for _, k := range kinds {
		out = append(out,
			Route{Method: "GET", Pattern: k.path, handler: listInfra(k.of)},
			Route{Method: "GET", Pattern: k.path + "/{" + k.param + "}", handler: getInfra(k.param, k.what, k.of)})
	}
	return out
}
