package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Catalog is a catalog in the API.
type Catalog struct {
	ID          string    `json:"id,omitempty"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Org         *Ref      `json:"org,omitempty"`
	CreatedAt   time.Time `json:"createdAt,omitzero"`
}

// CatalogItem is a Template offered by a catalog.
type CatalogItem struct {
	ID           string           `json:"id"`
	Name         string           `json:"name"`
	Description  string           `json:"description"`
	CatalogID    string           `json:"catalogId"`
	TemplateName string           `json:"templateName"`
	Version      string           `json:"version"`
	Parameters   []kube.Parameter `json:"parameters"`
}

func catalogOut(c store.Catalog) Catalog {
	return Catalog{ID: naming.URN(naming.KindCatalog, c.ID), Name: c.Name, Description: c.Description,
		Org: catalogOrg(c), CreatedAt: c.CreatedAt}
}

// catalogOrg is the organization a catalog belongs to; a provider library's is the System organization.
func catalogOrg(c store.Catalog) *Ref {
	if c.Provider() {
		return &Ref{Name: SystemOrgName, ID: systemOrgURN}
	}
	return &Ref{Name: c.OrgName, ID: naming.URN(naming.KindOrg, c.OrgID)}
}

func itemOut(catalogID string, t kube.Template) CatalogItem {
	params := t.Parameters
	if params == nil {
		params = []kube.Parameter{}
	}
	return CatalogItem{
		ID: naming.URN(naming.KindCatalogItem, naming.CatalogItemID(catalogID, t.Name)), Name: t.DisplayName,
		Description: t.Description, CatalogID: naming.URN(naming.KindCatalog, catalogID), TemplateName: t.Name,
		Version: t.Version, Parameters: params,
	}
}

var catalogFields = fields{
	"id": urn("id", naming.KindCatalog), "name": text("name"), "description": text("description"),
	"org.id": urn("org_id", naming.KindOrg),
}

// writeCatalogs answers a page of the catalogs the caller sees, each in the shape out gives: the same rows serve
// CloudAPI 1.0.0's catalogs and the Tenant Manager's content libraries.
func writeCatalogs[T any](s *Server, w http.ResponseWriter, r *http.Request, out func(store.Catalog) T) error {
	return writeList(w, r, catalogFields, func(q store.Query) ([]store.Catalog, int, error) {
		return s.store.ListCatalogs(r.Context(), principal(r).Scope(), q)
	}, out)
}

func (s *Server) listCatalogs(w http.ResponseWriter, r *http.Request) error {
	return writeCatalogs(s, w, r, catalogOut)
}

// createCatalog: organization administrators create catalogs in their organization; system administrators
// name the organization in org.id.
func (s *Server) createCatalog(w http.ResponseWriter, r *http.Request) error {
	var in Catalog
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.ID != "" || !in.CreatedAt.IsZero() {
		return badRequest("id and createdAt are set by the server")
	}
	c, err := s.makeCatalog(r, in)
	return writeOne(w, http.StatusCreated, catalogOut(c), err)
}

// makeCatalog creates catalog in if the caller is an administrator: in the organization in.Org names, else in the tenant
// context's, else in the caller's.
func (s *Server) makeCatalog(r *http.Request, in Catalog) (store.Catalog, error) {
	p := principal(r)
	if !p.orgAdmin() {
		return store.Catalog{}, forbidden("only administrators create catalogs")
	}
	if err := checkName("name", in.Name); err != nil {
		return store.Catalog{}, err
	}
	if err := checkText("description", in.Description, 1024); err != nil {
		return store.Catalog{}, err
	}
	orgID := p.OrgID
	if p.tenantContext != "" {
		orgID = p.tenantContext
	}
	if in.Org != nil {
		id, ok := naming.ParseURN(naming.KindOrg, in.Org.ID)
		if !ok {
			return store.Catalog{}, badRequest("org.id is not an organization URN")
		}
		orgID = id
	}
	if orgID == "" {
		return store.Catalog{}, badRequest("org.id is required")
	}
	o, err := s.store.GetOrg(r.Context(), p.Scope(), orgID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Catalog{}, noAccess("organization")
	} else if err != nil {
		return store.Catalog{}, err
	}
	c, err := s.store.CreateCatalog(r.Context(), store.Catalog{OrgID: orgID, OrgName: o.Name, Name: in.Name, Description: in.Description})
	if errors.Is(err, store.ErrConflict) {
		return c, conflict("the organization has a catalog named " + in.Name)
	}
	return c, err
}

func (s *Server) catalog(r *http.Request) (store.Catalog, error) {
	id, err := idOf(r, "catalogId", naming.KindCatalog, "catalog")
	if err != nil {
		return store.Catalog{}, err
	}
	c, err := s.store.GetCatalog(r.Context(), principal(r).Scope(), id)
	if errors.Is(err, store.ErrNotFound) {
		return c, noAccess("catalog")
	}
	return c, err
}

func (s *Server) getCatalog(w http.ResponseWriter, r *http.Request) error {
	c, err := s.catalog(r)
	return writeOne(w, http.StatusOK, catalogOut(c), err)
}

func (s *Server) deleteCatalog(w http.ResponseWriter, r *http.Request) error {
	c, err := s.catalog(r)
	if err != nil {
		return err
	}
	if !principal(r).orgAdmin() {
		return forbidden("only administrators delete catalogs")
	}
	if err := s.store.DeleteCatalog(r.Context(), store.Scope{OrgID: c.OrgID}, c.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// templates are the catalog's Templates from the informer cache; its last state is served while Kubernetes
// is unreachable.
func (s *Server) templates(r *http.Request) ([]kube.Template, error) {
	ts, err := s.cluster.Templates(r.Context())
	if err != nil {
		return nil, unavailable("the template catalog is unavailable: " + err.Error())
	}
	return ts, nil
}

func (s *Server) listCatalogItems(w http.ResponseWriter, r *http.Request) error {
	c, err := s.catalog(r)
	if err != nil {
		return err
	}
	return writeWindow(w, r, itemFields, func() ([]CatalogItem, error) {
		ts, err := s.templates(r)
		items := make([]CatalogItem, len(ts))
		for i, t := range ts {
			items[i] = itemOut(c.ID, t)
		}
		return items, err
	}, CatalogItem.field)
}

// itemFields: catalog items are Templates, not rows; they are filtered and sorted in memory.
var itemFields = fields{"id": urn("", naming.KindCatalogItem), "name": text(""), "description": text(""),
	"templateName": text(""), "version": text("")}

func (it CatalogItem) field(name string) string {
	return map[string]string{"id": it.ID, "name": it.Name, "description": it.Description, "templateName": it.TemplateName,
		"version": it.Version}[name]
}

func (s *Server) getCatalogItem(w http.ResponseWriter, r *http.Request) error {
	c, err := s.catalog(r)
	if err != nil {
		return err
	}
	itemID, err := idOf(r, "itemId", naming.KindCatalogItem, "catalog item")
	if err != nil {
		return err
	}
	ts, err := s.templates(r)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if naming.CatalogItemID(c.ID, t.Name) == itemID {
			writeJSON(w, http.StatusOK, itemOut(c.ID, t))
			return nil
		}
	}
	return noAccess("catalog item")
}
