package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
)

// Catalog is an organization's view of the template catalog: its items are the Templates the process
// discovers in Kubernetes, not rows. A provider library (CreateProviderLibrary) is a catalog of no organization.
// OrgName is read, never written.
type Catalog struct {
	ID, OrgID, OrgName, Name, Description string
	CreatedAt                             time.Time
}

// Provider says whether c is a provider library: the system administrators', of no organization.
func (c Catalog) Provider() bool { return c.OrgID == "" }

const catalogColumns = "id, org_id, name, description, created_at"

// catalogRows are the organizations' catalogs and the provider libraries (org_id ”), as one table: a scope of one
// organization never sees a provider library, and the lists page and filter over both.
const catalogRows = "(SELECT " + catalogColumns + " FROM catalogs UNION ALL " +
	"SELECT id, '' AS org_id, name, description, created_at FROM provider_libraries) AS catalogs"

// catalogSelect reads a catalog with its organization's name (Cloud Director's clients use the name of an
// entity's organization as their tenant context); a provider library's is "".
const catalogSelect = "SELECT id, org_id, COALESCE((SELECT o.name FROM organizations o WHERE o.id = catalogs.org_id), '') AS org_name, " +
	"name, description, created_at FROM " + catalogRows

func scanCatalog(row scanner) (Catalog, error) {
	var c Catalog
	var created int64
	err := row.Scan(&c.ID, &c.OrgID, &c.OrgName, &c.Name, &c.Description, &created)
	c.CreatedAt = fromMillis(created)
	return c, classify(err)
}

// CreateCatalog inserts c with a new ID.
func (s *Store) CreateCatalog(ctx context.Context, c Catalog) (Catalog, error) {
	c.ID = uuid.NewString()
	t := now()
	c.CreatedAt = fromMillis(t)
	_, err := s.exec(ctx, "INSERT INTO catalogs ("+catalogColumns+") VALUES (?, ?, ?, ?, ?)", c.ID, c.OrgID, c.Name, c.Description, t)
	return c, err
}

// CreateProviderLibrary inserts a provider library with a new ID; a name another provider library has is ErrConflict.
func (s *Store) CreateProviderLibrary(ctx context.Context, name, description string) (Catalog, error) {
	c := Catalog{ID: uuid.NewString(), Name: name, Description: description}
	t := now()
	c.CreatedAt = fromMillis(t)
	_, err := s.exec(ctx, "INSERT INTO provider_libraries (id, name, description, created_at) VALUES (?, ?, ?, ?)", c.ID, name, description, t)
	return c, err
}

// GetCatalog returns a catalog the scope may see.
func (s *Store) GetCatalog(ctx context.Context, sc Scope, id string) (Catalog, error) {
	cond, args := sc.where("org_id")
	return scanCatalog(s.queryRow(ctx, catalogSelect+" WHERE id = ?"+cond, append([]any{id}, args...)...))
}

// ListCatalogs pages through the catalogs the scope may see, by name.
func (s *Store) ListCatalogs(ctx context.Context, sc Scope, q Query) ([]Catalog, int, error) {
	cond, args := sc.where("org_id")
	return list(ctx, s, catalogSelect, "SELECT COUNT(*) FROM "+catalogRows, cond, args, q, "name, id", scanCatalog)
}

// AllCatalogs returns every catalog the scope may see, by name: the lists that span catalogs (their items) are
// not rows and are paged after they are made.
func (s *Store) AllCatalogs(ctx context.Context, sc Scope) ([]Catalog, error) {
	cond, args := sc.where("org_id")
	return all(ctx, s, catalogSelect+" WHERE 1 = 1"+cond+" ORDER BY name, id", args, scanCatalog)
}

// DeleteCatalog removes a catalog the scope may see (a provider library only when the scope is every organization).
func (s *Store) DeleteCatalog(ctx context.Context, sc Scope, id string) error {
	cond, args := sc.where("org_id")
	res, err := s.exec(ctx, "DELETE FROM catalogs WHERE id = ?"+cond, append([]any{id}, args...)...)
	if err != nil {
		return err
	}
	err = mustAffect(res)
	if errors.Is(err, ErrNotFound) && sc.OrgID == "" {
		if res, err = s.exec(ctx, "DELETE FROM provider_libraries WHERE id = ?", id); err != nil {
			return err
		}
		return mustAffect(res)
	}
	return err
}

// UpdateCatalog writes c's name and description; a name the organization (or, for a provider library, another
// provider library) already has is ErrConflict.
func (s *Store) UpdateCatalog(ctx context.Context, c Catalog) (Catalog, error) {
	table := "catalogs"
	if c.Provider() {
		table = "provider_libraries"
	}
	res, err := s.exec(ctx, "UPDATE "+table+" SET name = ?, description = ? WHERE id = ?", c.Name, c.Description, c.ID)
	if err != nil {
		return Catalog{}, err
	}
	if err := mustAffect(res); err != nil {
		return Catalog{}, err
	}
	return s.GetCatalog(ctx, Scope{}, c.ID)
}
