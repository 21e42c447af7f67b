package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Catalog is an organization's view of the template catalog: its items are the Templates the process
// discovers in Kubernetes, not rows.
// OrgName is read, never written.
type Catalog struct {
	ID, OrgID, OrgName, Name, Description string
	CreatedAt                             time.Time
}

const catalogColumns = "id, org_id, name, description, created_at"

// catalogSelect reads a catalog with its organization's name (Cloud Director's clients use the name of an
// entity's organization as their tenant context).
const catalogSelect = "SELECT id, org_id, (SELECT o.name FROM organizations o WHERE o.id = catalogs.org_id) AS org_name, name, description, created_at FROM catalogs"

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

// GetCatalog returns a catalog the scope may see.
func (s *Store) GetCatalog(ctx context.Context, sc Scope, id string) (Catalog, error) {
	cond, args := sc.where("org_id")
	return scanCatalog(s.queryRow(ctx, catalogSelect+" WHERE id = ?"+cond, append([]any{id}, args...)...))
}

// ListCatalogs pages through the catalogs the scope may see, by name.
func (s *Store) ListCatalogs(ctx context.Context, sc Scope, q Query) ([]Catalog, int, error) {
	cond, args := sc.where("org_id")
	return list(ctx, s, catalogSelect, "SELECT COUNT(*) FROM catalogs", cond, args, q, "name, id", scanCatalog)
}

// AllCatalogs returns every catalog the scope may see, by name: the lists that span catalogs (their items) are
// not rows and are paged after they are made.
func (s *Store) AllCatalogs(ctx context.Context, sc Scope) ([]Catalog, error) {
	cond, args := sc.where("org_id")
	return all(ctx, s, catalogSelect+" WHERE 1 = 1"+cond+" ORDER BY name, id", args, scanCatalog)
}

// DeleteCatalog removes a catalog the scope may see.
func (s *Store) DeleteCatalog(ctx context.Context, sc Scope, id string) error {
	cond, args := sc.where("org_id")
	res, err := s.exec(ctx, "DELETE FROM catalogs WHERE id = ?"+cond, append([]any{id}, args...)...)
	if err != nil {
		return err
	}
	return mustAffect(res)
}

// UpdateCatalog writes c's name and description; a name the organization already has is ErrConflict.
func (s *Store) UpdateCatalog(ctx context.Context, c Catalog) (Catalog, error) {
	res, err := s.exec(ctx, "UPDATE catalogs SET name = ?, description = ? WHERE id = ?", c.Name, c.Description, c.ID)
	if err != nil {
		return Catalog{}, err
	}
	if err := mustAffect(res); err != nil {
		return Catalog{}, err
	}
	return s.GetCatalog(ctx, Scope{}, c.ID)
}
