package api

import (
	"net/http"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// TmVDC is a VDC in the shape of the Tenant Manager's virtual datacenters (/cloudapi/vcf/virtualDatacenters),
// which Cloud Director's Go SDK reads and writes with its typed Region Quota calls. ssvirt has one region and
// no supervisors or zones: those references are accepted and ignored on create, and left out of answers. The
// allocation's memory limit is the VDC's; the Tenant Manager counts CPU in MHz, which a Kubernetes quota does
// not have, so CPU limits and reservations stay in CloudAPI 1.0.0's millicores and read as 0 here.
type TmVDC struct {
	ID                     string           `json:"id,omitempty"`
	Name                   string           `json:"name"`
	Description            string           `json:"description,omitempty"`
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

func tmVDCOut(v store.VDC) TmVDC {
	return TmVDC{
		ID: naming.URN(naming.KindVDC, v.ID), Name: v.Name, Description: v.Description,
		Org:                    &Ref{Name: v.OrgName, ID: naming.URN(naming.KindOrg, v.OrgID)},
		Status:                 v.State,
		ZoneResourceAllocation: []ZoneAllocation{{ResourceAllocation: ResourceAllocation{MemoryLimitMiB: v.MemoryMiB}}},
	}
}

// vdc is the CloudAPI 1.0.0 VDC a Tenant Manager create asks for.
func (in TmVDC) vdc() (VDC, error) {
	if in.ID != "" || in.Status != "" {
		return VDC{}, badRequest("id and status are set by the server")
	}
	if len(in.ZoneResourceAllocation) > 1 {
		return VDC{}, badRequest("zoneResourceAllocation: ssvirt has one zone")
	}
	out := VDC{Name: in.Name, Description: in.Description}
	for _, z := range in.ZoneResourceAllocation {
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
	return writeVDCs(s, w, r, "", tmVDCOut)
}

func (s *Server) tmGetVDC(w http.ResponseWriter, r *http.Request) error {
	v, err := s.vdc(r)
	return writeOne(w, http.StatusOK, tmVDCOut(v), err)
}

// tmCreateVDC: the organization is the body's org.id, with the admin API's rules (a system administrator
// creates, in an organization it may see).
func (s *Server) tmCreateVDC(w http.ResponseWriter, r *http.Request) error {
	var in TmVDC
	if err := decode(w, r, &in); err != nil {
		return err
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
	vdc, err := in.vdc()
	if err != nil {
		return err
	}
	v, err := s.makeVDC(r, o, vdc)
	return writeOne(w, http.StatusCreated, tmVDCOut(v), err)
}

func (s *Server) tmDeleteVDC(w http.ResponseWriter, r *http.Request) error {
	v, err := s.vdc(r)
	if err != nil {
		return err
	}
	return s.removeVDC(w, r, v)
}
