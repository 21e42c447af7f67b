package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Catalog is an organization's view of the template catalog: its items are the Templates the process
// discovers in Kubernetes, not rows.
type Catalog struct {
	ID, OrgID, Name, Description string
	CreatedAt                    time.Time
}

const catalogColumns = "id, org_id, name, description, created_at"

func scanCatalog(row scanner) (Catalog, error) {
	var c Catalog
	var created int64
	err := row.Scan(&c.ID, &c.OrgID, &c.Name, &c.Description, &created)
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
	return scanCatalog(s.queryRow(ctx, "SELECT "+catalogColumns+" FROM catalogs WHERE id = ?"+cond, append([]any{id}, args...)...))
}

// ListCatalogs pages through the catalogs the scope may see, by name.
func (s *Store) ListCatalogs(ctx context.Context, sc Scope, q Query) ([]Catalog, int, error) {
	cond, args := sc.where("org_id")
	return list(ctx, s, "SELECT "+catalogColumns+" FROM catalogs", "SELECT COUNT(*) FROM catalogs", cond, args, q, "name, id", scanCatalog)
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
