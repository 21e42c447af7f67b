package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/vdc"
)

// Capacity is one limit; 0 is unlimited.
type Capacity struct {
	Limit int64  `json:"limit"`
	Units string `json:"units,omitempty"`
}

// ComputeCapacity holds the CPU (millicores) and memory (MiB) limits.
type ComputeCapacity struct {
	CPU    Capacity `json:"cpu"`
	Memory Capacity `json:"memory"`
}

// VDC is a VDC in the API. Status is its namespace's state: PENDING until Kubernetes has it, READY after.
type VDC struct {
	ID              string          `json:"id,omitempty"`
	Name            string          `json:"name"`
	Description     string          `json:"description"`
	Org             *Ref            `json:"org,omitempty"`
	IsEnabled       *bool           `json:"isEnabled,omitempty"`
	ComputeCapacity ComputeCapacity `json:"computeCapacity"`
	StorageCapacity Capacity        `json:"storageCapacity"`
	Namespace       string          `json:"namespace,omitempty"`
	Status          string          `json:"status,omitempty"`
	CreatedAt       time.Time       `json:"createdAt,omitzero"`
}

// Units of the limits.
const (
	UnitsCPU     = "millicores"
	UnitsMemory  = "MiB"
	UnitsStorage = "GiB"
	// maxLimit keeps limits far from overflowing when turned into bytes.
	maxLimit = 1 << 30
)

func vdcOut(v store.VDC) VDC {
	enabled := v.Enabled
	return VDC{
		ID: naming.URN(naming.KindVDC, v.ID), Name: v.Name, Description: v.Description,
		Org:       &Ref{Name: v.OrgName, ID: naming.URN(naming.KindOrg, v.OrgID)},
		IsEnabled: &enabled,
		ComputeCapacity: ComputeCapacity{
			CPU: Capacity{Limit: v.CPUMillicores, Units: UnitsCPU}, Memory: Capacity{Limit: v.MemoryMiB, Units: UnitsMemory},
		},
		StorageCapacity: Capacity{Limit: v.StorageGiB, Units: UnitsStorage},
		Namespace:       v.Namespace, Status: v.State, CreatedAt: v.CreatedAt,
	}
}

func (in VDC) check() error {
	if err := checkName("name", in.Name); err != nil {
		return err
	}
	if err := checkText("description", in.Description, 1024); err != nil {
		return err
	}
	for _, c := range []struct {
		field string
		cap   Capacity
		units string
	}{
		{"computeCapacity.cpu", in.ComputeCapacity.CPU, UnitsCPU},
		{"computeCapacity.memory", in.ComputeCapacity.Memory, UnitsMemory},
		{"storageCapacity", in.StorageCapacity, UnitsStorage},
	} {
		if c.cap.Limit < 0 || c.cap.Limit > maxLimit {
			return badRequest(fmt.Sprintf("%s.limit: from 0 (unlimited) to %d", c.field, maxLimit))
		}
		if c.cap.Units != "" && c.cap.Units != c.units {
			return badRequest(fmt.Sprintf("%s.units: only %q", c.field, c.units))
		}
	}
	return nil
}

// adminOrg resolves the {orgId} of an admin path: another organization than the caller's is not found.
func (s *Server) adminOrg(r *http.Request) (store.Org, error) {
	id, err := idOf(r, "orgId", naming.KindOrg, "organization")
	if err != nil {
		return store.Org{}, err
	}
	return s.administeredOrg(r, id)
}

// administeredOrg is organization id for an administrator of it: another organization than the caller's is not
// found, a caller who administers nothing is refused.
func (s *Server) administeredOrg(r *http.Request, id string) (store.Org, error) {
	o, err := s.store.GetOrg(r.Context(), principal(r).Scope(), id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Org{}, noAccess("organization")
	}
	if err != nil {
		return store.Org{}, err
	}
	if !principal(r).orgAdmin() {
		return store.Org{}, forbidden("the admin API is for administrators")
	}
	return o, nil
}

func (s *Server) adminVDC(r *http.Request) (store.Org, store.VDC, error) {
	o, err := s.adminOrg(r)
	if err != nil {
		return o, store.VDC{}, err
	}
	id, err := idOf(r, "vdcId", naming.KindVDC, "VDC")
	if err != nil {
		return o, store.VDC{}, err
	}
	v, err := s.store.GetVDC(r.Context(), store.Scope{OrgID: o.ID}, id)
	if errors.Is(err, store.ErrNotFound) {
		return o, v, noAccess("VDC")
	}
	return o, v, err
}

var vdcFields = fields{
	"id": urn("v.id", naming.KindVDC), "name": text("v.name"), "description": text("v.description"),
	"isEnabled": boolean("v.enabled"), "org.id": urn("v.org_id", naming.KindOrg), "status": text("v.k8s_state"),
	"namespace": text("v.namespace"),
}

// writeVDCs answers a page of the VDCs the caller sees (in organization orgID when set), each in the shape out
// gives: the same rows serve CloudAPI 1.0.0 and the Tenant Manager's virtual datacenters.
func writeVDCs[T any](s *Server, w http.ResponseWriter, r *http.Request, orgID string, out func(store.VDC) T) error {
	return writeList(w, r, vdcFields, func(q store.Query) ([]store.VDC, int, error) {
		return s.store.ListVDCs(r.Context(), principal(r).Scope(), orgID, q)
	}, out)
}

func (s *Server) adminListVDCs(w http.ResponseWriter, r *http.Request) error {
	o, err := s.adminOrg(r)
	if err != nil {
		return err
	}
	return writeVDCs(s, w, r, o.ID, vdcOut)
}

func (s *Server) listVDCs(w http.ResponseWriter, r *http.Request) error {
	return writeVDCs(s, w, r, "", vdcOut)
}

// vdc resolves the {vdcId} of a tenant path within the caller's scope.
func (s *Server) vdc(r *http.Request) (store.VDC, error) {
	id, err := idOf(r, "vdcId", naming.KindVDC, "VDC")
	if err != nil {
		return store.VDC{}, err
	}
	v, err := s.store.GetVDC(r.Context(), principal(r).Scope(), id)
	if errors.Is(err, store.ErrNotFound) {
		return v, noAccess("VDC")
	}
	return v, err
}

func (s *Server) getVDC(w http.ResponseWriter, r *http.Request) error {
	v, err := s.vdc(r)
	return writeOne(w, http.StatusOK, vdcOut(v), err)
}

func (s *Server) adminGetVDC(w http.ResponseWriter, r *http.Request) error {
	_, v, err := s.adminVDC(r)
	return writeOne(w, http.StatusOK, vdcOut(v), err)
}

// createVDC creates a VDC in the path's organization; see vdc.Service.Create for the order of the database and
// Kubernetes steps.
func (s *Server) createVDC(w http.ResponseWriter, r *http.Request) error {
	o, err := s.adminOrg(r)
	if err != nil {
		return err
	}
	if !principal(r).sysAdmin() {
		return forbidden("only system administrators create VDCs")
	}
	var in VDC
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.ID != "" || in.Namespace != "" || in.Status != "" || in.Org != nil || !in.CreatedAt.IsZero() {
		return badRequest("id, org, namespace, status and createdAt are set by the server")
	}
	v, err := s.makeVDC(r, o, in)
	return writeOne(w, http.StatusCreated, vdcOut(v), err)
}

// makeVDC creates VDC in in organization o for a caller already allowed to; a VDC is enabled unless in says
// otherwise.
func (s *Server) makeVDC(r *http.Request, o store.Org, in VDC) (store.VDC, error) {
	if err := in.check(); err != nil {
		return store.VDC{}, err
	}
	v, err := s.vdcs.Create(r.Context(), o, vdc.Spec{Name: in.Name, Settings: in.settings(true)})
	return v, vdcRefusal(err)
}

// updateVDC changes description, enabled flag and limits (see changeVDC).
func (s *Server) updateVDC(w http.ResponseWriter, r *http.Request) error {
	_, cur, err := s.adminVDC(r)
	if err != nil {
		return err
	}
	if !principal(r).sysAdmin() {
		return forbidden("only system administrators change VDCs")
	}
	var in VDC
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if (in.ID != "" && in.ID != naming.URN(naming.KindVDC, cur.ID)) || (in.Namespace != "" && in.Namespace != cur.Namespace) {
		return badRequest("id and namespace cannot change")
	}
	v, err := s.changeVDC(r, cur, in)
	return writeOne(w, http.StatusOK, vdcOut(v), err)
}

// changeVDC writes in's description, enabled flag (when set) and limits to VDC cur; see vdc.Service.Update. The
// name cannot change: it names the namespace.
func (s *Server) changeVDC(r *http.Request, cur store.VDC, in VDC) (store.VDC, error) {
	if in.Name != cur.Name {
		return cur, badRequest("a VDC's name cannot change (it names its namespace)")
	}
	if err := in.check(); err != nil {
		return cur, err
	}
	v, err := s.vdcs.Update(r.Context(), cur, in.settings(cur.Enabled))
	return v, vdcRefusal(err)
}

// deleteVDC deletes the VDC: 204 when its namespace is already gone, 202 with a task while Kubernetes deletes it
// or while Kubernetes is unreachable (the reconciler finishes either, and the task with it).
func (s *Server) deleteVDC(w http.ResponseWriter, r *http.Request) error {
	_, v, err := s.adminVDC(r)
	if err != nil {
		return err
	}
	return s.removeVDC(w, r, v)
}

// removeVDC deletes VDC v for a caller that may see it, if the caller is a system administrator.
func (s *Server) removeVDC(w http.ResponseWriter, r *http.Request, v store.VDC) error {
	if !principal(r).sysAdmin() {
		return forbidden("only system administrators delete VDCs")
	}
	d, err := s.vdcs.Delete(r.Context(), v)
	if err != nil {
		return vdcRefusal(err)
	}
	if d.Done {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	accepted(w, r, d.Task, nil)
	return nil
}

// settings are in's settings for the VDC service; enabled is the flag when in leaves it out.
func (in VDC) settings(enabled bool) vdc.Settings {
	if in.IsEnabled != nil {
		enabled = *in.IsEnabled
	}
	return vdc.Settings{
		Description: in.Description, Enabled: enabled,
		CPUMillicores: in.ComputeCapacity.CPU.Limit, MemoryMiB: in.ComputeCapacity.Memory.Limit, StorageGiB: in.StorageCapacity.Limit,
	}
}

// vdcRefusal answers what the VDC service refused or undid; other errors are left to fail.
func vdcRefusal(err error) error {
	var e *vdc.Error
	if !errors.As(err, &e) {
		return err
	}
	switch {
	case errors.Is(e.Kind, vdc.ErrNameTaken), errors.Is(e.Kind, vdc.ErrNamespaceTaken):
		return conflict(e.Msg)
	case errors.Is(e.Kind, vdc.ErrHasVApps):
		return busy(e.Msg)
	case errors.Is(e.Kind, vdc.ErrUnavailable):
		return unavailable(e.Msg)
	}
	return err
}
