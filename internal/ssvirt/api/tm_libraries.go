package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// ContentLibrary is a catalog in the shape of the Tenant Manager's content libraries
// (/cloudapi/vcf/contentLibraries), which Cloud Director's Go SDK reads and writes with its typed calls. A
// catalog belongs to one organization and offers its items to every VDC of it: it is a TENANT library, attached
// to everything, neither shared nor subscribed. One a system administrator creates without an organization is a
// PROVIDER library, the System organization's, which only system administrators see. Its storage class is the
// region's one (see infra): Templates are instantiated on the storage they name, so a library names that one, or
// none, and reads back naming it.
type ContentLibrary struct {
	ID                    string            `json:"id,omitempty"`
	Name                  string            `json:"name"`
	Description           string            `json:"description,omitempty"`
	Org                   *Ref              `json:"org,omitempty"`
	LibraryType           string            `json:"libraryType,omitempty"`
	AutoAttach            bool              `json:"autoAttach"`
	IsShared              bool              `json:"isShared"`
	IsSubscribed          bool              `json:"isSubscribed"`
	IsProjectScoped       bool              `json:"isProjectScoped"`
	Status                string            `json:"status,omitempty"`
	CreationDate          string            `json:"creationDate,omitempty"`
	VersionNumber         int64             `json:"versionNumber,omitempty"`
	StorageClasses        []Ref             `json:"storageClasses,omitempty"`
	SubscriptionConfig    json.RawMessage   `json:"subscriptionConfig,omitempty"`
	AllProjectsPermission string            `json:"allProjectsPermission,omitempty"`
	ProjectPermissions    []json.RawMessage `json:"projectPermissions,omitempty"`
}

// ContentLibraryItem is a catalog item (a Template) in the shape of the Tenant Manager's content library items.
// Version is the Template's when it is a whole number (the Tenant Manager's versions are); TemplateName, which
// the Tenant Manager does not have, is the Template's name.
type ContentLibraryItem struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Description    string `json:"description,omitempty"`
	ItemType       string `json:"itemType"`
	ContentLibrary Ref    `json:"contentLibrary"`
	Org            *Ref   `json:"org,omitempty"`
	Status         string `json:"status"`
	Version        int    `json:"version,omitempty"`
	TemplateName   string `json:"templateName"`
}

// Values the Tenant Manager's types take here.
const (
	libraryTenant   = "TENANT"
	libraryProvider = "PROVIDER"
	statusReady     = "READY"
	itemTemplate    = "TEMPLATE"
)

func (inf infra) libraryOut(c store.Catalog) ContentLibrary {
	return ContentLibrary{StorageClasses: []Ref{inf.storageClass},
		ID: naming.URN(naming.KindCatalog, c.ID), Name: c.Name, Description: c.Description,
		Org: catalogOrg(c), LibraryType: libraryType(c), AutoAttach: true,
		Status: statusReady, CreationDate: c.CreatedAt.UTC().Format(time.RFC3339),
	}
}

func libraryType(c store.Catalog) string {
	if c.Provider() {
		return libraryProvider
	}
	return libraryTenant
}

func libraryItemOut(c store.Catalog, t kube.Template) ContentLibraryItem {
	it := itemOut(c.ID, t)
	version, _ := strconv.Atoi(t.Version)
	return ContentLibraryItem{
		ID: it.ID, Name: it.Name, Description: it.Description, ItemType: itemTemplate,
		ContentLibrary: Ref{Name: c.Name, ID: it.CatalogID}, Org: catalogOrg(c),
		Status: statusReady, Version: version, TemplateName: it.TemplateName,
	}
}

// catalog is the catalog a Tenant Manager create asks for; what a catalog cannot be is refused, not ignored.
// autoAttach is not checked: the SDK always sends it, false unless set, and a catalog is attached regardless.
// libraryType is checked by the caller, which knows whether a provider library is asked for.
func (in ContentLibrary) catalog(inf infra) (Catalog, error) {
	for i := range in.StorageClasses {
		if err := checkRef("storageClasses", &in.StorageClasses[i], inf.storageClass); err != nil {
			return Catalog{}, err
		}
	}
	switch {
	case in.ID != "" || in.CreationDate != "" || in.Status != "" || in.VersionNumber != 0:
		return Catalog{}, badRequest("id, creationDate, status and versionNumber are set by the server")
	case in.LibraryType != "" && in.LibraryType != libraryTenant && in.LibraryType != libraryProvider:
		return Catalog{}, badRequest("libraryType: TENANT (an organization's) or PROVIDER (the system administrators')")
	case in.IsShared:
		return Catalog{}, badRequest("isShared: catalogs are not shared with other organizations")
	case in.IsSubscribed || len(in.SubscriptionConfig) > 0 && string(in.SubscriptionConfig) != "null":
		return Catalog{}, badRequest("subscribed libraries are not served: a catalog's items are the cluster's Templates")
	case in.IsProjectScoped || in.AllProjectsPermission != "" || len(in.ProjectPermissions) > 0:
		return Catalog{}, badRequest("projects are not served")
	}
	return Catalog{Name: in.Name, Description: in.Description, Org: in.Org}, nil
}

func (s *Server) listContentLibraries(w http.ResponseWriter, r *http.Request) error {
	return writeCatalogs(s, w, r, s.infra().libraryOut)
}

func (s *Server) getContentLibrary(w http.ResponseWriter, r *http.Request) error {
	c, err := s.catalog(r)
	return writeOne(w, http.StatusOK, s.infra().libraryOut(c), err)
}

// createContentLibrary: the organization is org.id, else the tenant context's (the SDK's TmOrg calls send it),
// else the caller's; as for catalogs, only administrators create. A system administrator naming no organization
// (as terraform-provider-vcd does), or the System one, or asking for libraryType PROVIDER, makes a provider library.
func (s *Server) createContentLibrary(w http.ResponseWriter, r *http.Request) error {
	var in ContentLibrary
	if err := decode(w, r, &in); err != nil {
		return err
	}
	want, err := in.catalog(s.infra())
	if err != nil {
		return err
	}
	p := principal(r)
	system := in.Org != nil && in.Org.ID == systemOrgURN
	provider := in.LibraryType == libraryProvider ||
		in.LibraryType == "" && (system || in.Org == nil && p.sysAdmin() && p.tenantContext == "")
	var c store.Catalog
	switch {
	case !provider && system:
		err = badRequest("org: a TENANT library belongs to an organization other than System")
	case !provider:
		c, err = s.makeCatalog(r, want)
	case !p.sysAdmin():
		err = forbidden("only system administrators create provider libraries")
	case in.Org != nil && !system:
		err = badRequest("org: a PROVIDER library belongs to the System organization")
	default:
		c, err = s.makeProviderLibrary(r, want)
	}
	return writeOne(w, http.StatusCreated, s.infra().libraryOut(c), err)
}

func (s *Server) makeProviderLibrary(r *http.Request, in Catalog) (store.Catalog, error) {
	if err := checkName("name", in.Name); err != nil {
		return store.Catalog{}, err
	}
	if err := checkText("description", in.Description, 1024); err != nil {
		return store.Catalog{}, err
	}
	c, err := s.store.CreateProviderLibrary(r.Context(), in.Name, in.Description)
	if errors.Is(err, store.ErrConflict) {
		return c, conflict("a provider library is named " + in.Name)
	}
	return c, err
}

// updateContentLibrary renames a catalog and changes its description. The SDK sends back the object it read:
// what the server sets may come back as it was, an id or organization other than the catalog's is refused, and
// what a catalog cannot be is refused as on create.
func (s *Server) updateContentLibrary(w http.ResponseWriter, r *http.Request) error {
	cur, err := s.catalog(r)
	if err != nil {
		return err
	}
	if !principal(r).orgAdmin() {
		return forbidden("only administrators change catalogs")
	}
	var in ContentLibrary
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.ID != "" && in.ID != naming.URN(naming.KindCatalog, cur.ID) {
		return badRequest("id does not match the path")
	}
	if in.Org != nil && in.Org.ID != "" && in.Org.ID != catalogOrg(cur).ID {
		return badRequest("org: a content library cannot move to another organization")
	}
	if in.LibraryType != "" && in.LibraryType != libraryType(cur) {
		return badRequest("libraryType: a content library keeps its type (" + libraryType(cur) + ")")
	}
	in.ID, in.CreationDate, in.Status, in.VersionNumber = "", "", "", 0
	want, err := in.catalog(s.infra())
	if err != nil {
		return err
	}
	if err := checkName("name", want.Name); err != nil {
		return err
	}
	if err := checkText("description", want.Description, 1024); err != nil {
		return err
	}
	cur.Name, cur.Description = want.Name, want.Description
	c, err := s.store.UpdateCatalog(r.Context(), cur)
	if errors.Is(err, store.ErrConflict) && cur.Provider() {
		return conflict("a provider library is named " + want.Name)
	} else if errors.Is(err, store.ErrConflict) {
		return conflict("the organization has a catalog named " + want.Name)
	}
	return writeOne(w, http.StatusOK, s.infra().libraryOut(c), err)
}

// libraryItemFields: the items of every catalog the caller sees, filtered in memory (see itemFields).
var libraryItemFields = fields{"id": urn("", naming.KindCatalogItem), "name": text(""), "description": text(""),
	"itemType": text(""), "contentLibrary.id": urn("", naming.KindCatalog), "contentLibrary.name": text(""),
	"org.id": urn("", naming.KindOrg), "templateName": text(""), "status": text("")}

func (it ContentLibraryItem) field(name string) string {
	return map[string]string{"id": it.ID, "name": it.Name, "description": it.Description, "itemType": it.ItemType,
		"contentLibrary.id": it.ContentLibrary.ID, "contentLibrary.name": it.ContentLibrary.Name, "org.id": it.Org.ID,
		"templateName": it.TemplateName, "status": it.Status}[name]
}

// libraryItems are the items of every catalog the caller sees: each catalog offers every Template.
func (s *Server) libraryItems(r *http.Request) ([]ContentLibraryItem, error) {
	cats, err := s.store.AllCatalogs(r.Context(), principal(r).Scope())
	if err != nil {
		return nil, err
	}
	ts, err := s.templates(r)
	if err != nil {
		return nil, err
	}
	items := make([]ContentLibraryItem, 0, len(cats)*len(ts))
	for _, c := range cats {
		for _, t := range ts {
			items = append(items, libraryItemOut(c, t))
		}
	}
	return items, nil
}

func (s *Server) listContentLibraryItems(w http.ResponseWriter, r *http.Request) error {
	return writeWindow(w, r, libraryItemFields, func() ([]ContentLibraryItem, error) { return s.libraryItems(r) },
		ContentLibraryItem.field)
}

func (s *Server) getContentLibraryItem(w http.ResponseWriter, r *http.Request) error {
	items, err := s.libraryItems(r)
	if err != nil {
		return err
	}
	// Item ids are canonical URNs: any other spelling names nothing, as idOf has it.
	i := slices.IndexFunc(items, func(it ContentLibraryItem) bool { return it.ID == r.PathValue("itemId") })
	if i < 0 {
		return noAccess("catalog item")
	}
	return writeOne(w, http.StatusOK, items[i], nil)
}
