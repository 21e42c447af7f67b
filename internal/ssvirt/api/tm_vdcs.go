package api

import (
	"net/http"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// TmVDC is a VDC in the shape of the Tenant Manager's virtual datacenters (/cloudapi/vcf/virtualDatacenters),
// which Cloud Director's Go SDK reads and writes with its typed Region Quota calls. ssvirt has one region (the
// cluster), one zone and one supervisor (see infra): every answer names them, a write may name them or leave
// them out, and naming any other is refused. The allocation's memory limit is the VDC's; the Tenant Manager
// counts CPU in MHz, which a Kubernetes quota does not have, so CPU limits and reservations stay in CloudAPI
// 1.0.0's millicores and read as 0 here.
type TmVDC struct {
	ID                     string           `json:"id,omitempty"`
	Name                   string           `json:"name"`
	Description            string           `json:"description,omitempty"`
	IsEnabled              *bool            `json:"isEnabled,omitempty"`
	Org                    *Ref             `json:"org"`
	Region                 *Ref             `json:"region"`
	Status                 string           `json:"status,omitempty"`
	Supervisors            []Ref            `json:"supervisors,omitempty"`
	ZoneResourceAllocation []ZoneAllocation `json:"zoneResourceAllocation,omitempty"`
}

// ZoneAllocation is a TmVDC's resources in one zone.
type ZoneAllocation struct {
	ResourceAllocation ResourceAllocation `json:"resourceAllocation"`
	Zone               *Ref               `json:"zone"`
}

// ResourceAllocation is the Tenant Manager's CPU (MHz) and memory (MiB) limits and reservations.
type ResourceAllocation struct {
	CPULimitMHz          int64 `json:"cpuLimitMHz"`
	CPUReservationMHz    int64 `json:"cpuReservationMHz"`
	MemoryLimitMiB       int64 `json:"memoryLimitMiB"`
	MemoryReservationMiB int64 `json:"memoryReservationMiB"`
}

func (inf infra) tmVDCOut(v store.VDC) TmVDC {
	enabled := v.Enabled
	zone := inf.zone
	return TmVDC{
		ID: naming.URN(naming.KindVDC, v.ID), Name: v.Name, Description: v.Description, IsEnabled: &enabled,
		Org:         &Ref{Name: v.OrgName, ID: naming.URN(naming.KindOrg, v.OrgID)},
		Region:      &inf.region,
		Supervisors: []Ref{inf.supervisor},
		Status:      v.State,
		ZoneResourceAllocation: []ZoneAllocation{{
			ResourceAllocation: ResourceAllocation{MemoryLimitMiB: v.MemoryMiB}, Zone: &zone,
		}},
	}
}

// vdc is the CloudAPI 1.0.0 VDC a Tenant Manager create or update asks for; region, zone and supervisors must
// be ssvirt's own, or left out.
func (in TmVDC) vdc(inf infra) (VDC, error) {
	if len(in.ZoneResourceAllocation) > 1 {
		return VDC{}, badRequest("zoneResourceAllocation: ssvirt has one zone")
	}
	if err := checkRef("region", in.Region, inf.region); err != nil {
		return VDC{}, err
	}
	for i := range in.Supervisors {
		if err := checkRef("supervisors", &in.Supervisors[i], inf.supervisor); err != nil {
			return VDC{}, err
		}
	}
	out := VDC{Name: in.Name, Description: in.Description, IsEnabled: in.IsEnabled}
	for _, z := range in.ZoneResourceAllocation {
		if err := checkRef("zoneResourceAllocation.zone", z.Zone, inf.zone); err != nil {
			return VDC{}, err
		}
		a := z.ResourceAllocation
		if a.CPULimitMHz != 0 || a.CPUReservationMHz != 0 || a.MemoryReservationMiB != 0 {
			return VDC{}, badRequest("zoneResourceAllocation: only memoryLimitMiB is served; CPU limits are in millicores " +
				"(computeCapacity.cpu of POST /api/admin/org/{orgId}/vdcs)")
		}
		out.ComputeCapacity.Memory.Limit = a.MemoryLimitMiB
	}
	return out, nil
}

func (s *Server) tmListVDCs(w http.ResponseWriter, r *http.Request) error {
	return writeVDCs(s, w, r, "", s.infra().tmVDCOut)
}

func (s *Server) tmGetVDC(w http.ResponseWriter, r *http.Request) error {
	v, err := s.vdc(r)
	return writeOne(w, http.StatusOK, s.infra().tmVDCOut(v), err)
}

// tmCreateVDC: the organization is the body's org.id, with the admin API's rules (a system administrator
// creates, in an organization it may see).
func (s *Server) tmCreateVDC(w http.ResponseWriter, r *http.Request) error {
	var in TmVDC
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.ID != "" || in.Status != "" {
		return badRequest("id and status are set by the server")
	}
	if in.Org == nil {
		return badRequest("org.id is required")
	}
	orgID, ok := naming.ParseURN(naming.KindOrg, in.Org.ID)
	if !ok {
		return badRequest("org.id is not an organization URN")
	}
	o, err := s.administeredOrg(r, orgID)
	if err != nil {
		return err
	}
	if !principal(r).sysAdmin() {
		return forbidden("only system administrators create VDCs")
	}
	inf := s.infra()
	want, err := in.vdc(inf)
	if err != nil {
		return err
	}
	v, err := s.makeVDC(r, o, want)
	return writeOne(w, http.StatusCreated, inf.tmVDCOut(v), err)
}

// tmUpdateVDC changes name-keeping fields as updateVDC does: description, enabled flag and memory limit. The CPU
// and storage limits, which the Tenant Manager's shape cannot carry, stay as they are. What the SDK sends back
// is the object it read, status included; an organization or id other than the VDC's is refused.
func (s *Server) tmUpdateVDC(w http.ResponseWriter, r *http.Request) error {
	cur, err := s.vdc(r)
	if err != nil {
		return err
	}
	if !principal(r).sysAdmin() {
		return forbidden("only system administrators change VDCs")
	}
	var in TmVDC
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.ID != "" && in.ID != naming.URN(naming.KindVDC, cur.ID) {
		return badRequest("id does not match the path")
	}
	if in.Org != nil && in.Org.ID != "" && in.Org.ID != naming.URN(naming.KindOrg, cur.OrgID) {
		return badRequest("org: a VDC cannot move to another organization")
	}
	inf := s.infra()
	want, err := in.vdc(inf)
	if err != nil {
		return err
	}
	want.ComputeCapacity.CPU.Limit, want.StorageCapacity.Limit = cur.CPUMillicores, cur.StorageGiB
	if len(in.ZoneResourceAllocation) == 0 {
		want.ComputeCapacity.Memory.Limit = cur.MemoryMiB
	}
	v, err := s.changeVDC(r, cur, want)
	return writeOne(w, http.StatusOK, inf.tmVDCOut(v), err)
}

func (s *Server) tmDeleteVDC(w http.ResponseWriter, r *http.Request) error {
	v, err := s.vdc(r)
	if err != nil {
		return err
	}
	return s.removeVDC(w, r, v)
}
