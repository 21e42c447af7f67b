package api

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Org is an organization in the API.
type Org struct {
	ID          string    `json:"id,omitempty"`
	Name        string    `json:"name"`
	DisplayName string    `json:"displayName"`
	Description string    `json:"description"`
	IsEnabled   *bool     `json:"isEnabled,omitempty"`
	CreatedAt   time.Time `json:"createdAt,omitzero"`
}

func orgOut(o store.Org) Org {
	enabled := o.Enabled
	return Org{ID: naming.URN(naming.KindOrg, o.ID), Name: o.Name, DisplayName: o.DisplayName, Description: o.Description,
		IsEnabled: &enabled, CreatedAt: o.CreatedAt}
}

func (o Org) check() error {
	if err := checkName("name", o.Name); err != nil {
		return err
	}
	if strings.EqualFold(o.Name, SystemOrgName) {
		return badRequest("name \"System\" is reserved for system administrators")
	}
	if err := checkText("displayName", o.DisplayName, 256); err != nil {
		return err
	}
	return checkText("description", o.Description, 1024)
}

var orgFields = fields{
	"id": urn("id", naming.KindOrg), "name": text("name"), "displayName": text("display_name"),
	"description": text("description"), "isEnabled": boolean("enabled"),
}

// systemOrg is the System organization as the API answers it: the system administrators', always enabled.
func systemOrg() Org {
	enabled := true
	return Org{ID: systemOrgURN, Name: SystemOrgName, DisplayName: SystemOrgName, Description: "the system administrators' organization",
		IsEnabled: &enabled}
}

func (o Org) field(name string) string {
	return map[string]string{"id": o.ID, "name": o.Name, "displayName": o.DisplayName, "description": o.Description,
		"isEnabled": strconv.FormatBool(o.IsEnabled != nil && *o.IsEnabled)}[name]
}

// listOrgs: a system administrator (outside a tenant context) sees the System organization too, where Cloud
// Director's clients look for it; it has no row, so that list is made in memory.
func (s *Server) listOrgs(w http.ResponseWriter, r *http.Request) error {
	sc := principal(r).Scope()
	if !principal(r).sysAdmin() || sc.OrgID != "" {
		return writeList(w, r, orgFields, func(q store.Query) ([]store.Org, int, error) {
			return s.store.ListOrgs(r.Context(), sc, q)
		}, orgOut)
	}
	return writeWindow(w, r, orgFields, func() ([]Org, error) {
		rows, err := s.store.AllOrgs(r.Context(), sc)
		if err != nil {
			return nil, err
		}
		out := []Org{systemOrg()}
		for _, o := range rows {
			out = append(out, orgOut(o))
		}
		slices.SortStableFunc(out, func(a, b Org) int { return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.ID, b.ID)) })
		return out, nil
	}, Org.field)
}

// systemOrgPath says whether the path names the System organization, which only system administrators see and
// nobody changes.
func systemOrgPath(r *http.Request) (bool, error) {
	if r.PathValue("orgId") != systemOrgURN {
		return false, nil
	}
	if !principal(r).sysAdmin() || principal(r).Scope().OrgID != "" {
		return true, noAccess("organization")
	}
	return true, nil
}

func (s *Server) createOrg(w http.ResponseWriter, r *http.Request) error {
	if !principal(r).sysAdmin() {
		return forbidden("only system administrators create organizations")
	}
	var in Org
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.ID != "" || !in.CreatedAt.IsZero() {
		return badRequest("id and createdAt are set by the server")
	}
	if in.DisplayName == "" {
		in.DisplayName = in.Name
	}
	if err := in.check(); err != nil {
		return err
	}
	o, err := s.store.CreateOrg(r.Context(), store.Org{Name: in.Name, DisplayName: in.DisplayName, Description: in.Description,
		Enabled: in.IsEnabled == nil || *in.IsEnabled})
	if errors.Is(err, store.ErrConflict) {
		return conflict("an organization named " + in.Name + " exists")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, orgOut(o))
	return nil
}

func (s *Server) getOrg(w http.ResponseWriter, r *http.Request) error {
	if system, err := systemOrgPath(r); system {
		return writeOne(w, http.StatusOK, systemOrg(), err)
	}
	id, err := idOf(r, "orgId", naming.KindOrg, "organization")
	if err != nil {
		return err
	}
	o, err := s.store.GetOrg(r.Context(), principal(r).Scope(), id)
	if errors.Is(err, store.ErrNotFound) {
		return noAccess("organization")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, orgOut(o))
	return nil
}

// updateOrg changes display name, description and enabled flag; the name is the login name and stays.
func (s *Server) updateOrg(w http.ResponseWriter, r *http.Request) error {
	if system, err := systemOrgPath(r); system {
		return cmp.Or[error](err, forbidden("the System organization cannot change"))
	}
	id, err := idOf(r, "orgId", naming.KindOrg, "organization")
	if err != nil {
		return err
	}
	p := principal(r)
	cur, err := s.store.GetOrg(r.Context(), p.Scope(), id)
	if errors.Is(err, store.ErrNotFound) {
		return noAccess("organization")
	}
	if err != nil {
		return err
	}
	if !p.sysAdmin() {
		return forbidden("only system administrators change organizations")
	}
	var in Org
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Name != cur.Name {
		return badRequest("an organization's name cannot change")
	}
	if in.ID != "" && in.ID != naming.URN(naming.KindOrg, id) {
		return badRequest("id does not match the path")
	}
	if in.DisplayName == "" {
		in.DisplayName = cur.DisplayName
	}
	if err := in.check(); err != nil {
		return err
	}
	cur.DisplayName, cur.Description = in.DisplayName, in.Description
	if in.IsEnabled != nil {
		cur.Enabled = *in.IsEnabled
	}
	o, err := s.store.UpdateOrg(r.Context(), cur)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, orgOut(o))
	return nil
}

func (s *Server) deleteOrg(w http.ResponseWriter, r *http.Request) error {
	if system, err := systemOrgPath(r); system {
		return cmp.Or[error](err, forbidden("the System organization cannot be deleted"))
	}
	id, err := idOf(r, "orgId", naming.KindOrg, "organization")
	if err != nil {
		return err
	}
	p := principal(r)
	if _, err := s.store.GetOrg(r.Context(), p.Scope(), id); errors.Is(err, store.ErrNotFound) {
		return noAccess("organization")
	} else if err != nil {
		return err
	}
	if !p.sysAdmin() {
		return forbidden("only system administrators delete organizations")
	}
	err = s.store.DeleteOrg(r.Context(), id)
	if errors.Is(err, store.ErrConflict) {
		return busy("the organization still has VDCs or vApps: delete them first")
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
