package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Org is an organization: the tenant boundary.
type Org struct {
	ID, Name, DisplayName, Description string
	Enabled                            bool
	CreatedAt, UpdatedAt               time.Time
}

const orgColumns = "id, name, display_name, description, enabled, created_at, updated_at"

func scanOrg(row scanner) (Org, error) {
	var o Org
	var created, updated int64
	err := row.Scan(&o.ID, &o.Name, &o.DisplayName, &o.Description, &o.Enabled, &created, &updated)
	o.CreatedAt, o.UpdatedAt = fromMillis(created), fromMillis(updated)
	return o, classify(err)
}

// CreateOrg inserts o with a new ID and returns it.
func (s *Store) CreateOrg(ctx context.Context, o Org) (Org, error) {
	o.ID = uuid.NewString()
	t := now()
	o.CreatedAt, o.UpdatedAt = fromMillis(t), fromMillis(t)
	_, err := s.exec(ctx, "INSERT INTO organizations ("+orgColumns+") VALUES (?, ?, ?, ?, ?, ?, ?)",
		o.ID, o.Name, o.DisplayName, o.Description, o.Enabled, t, t)
	return o, err
}

// GetOrg returns the organization id if the scope may see it.
func (s *Store) GetOrg(ctx context.Context, sc Scope, id string) (Org, error) {
	cond, args := sc.where("id")
	return scanOrg(s.queryRow(ctx, "SELECT "+orgColumns+" FROM organizations WHERE id = ?"+cond, append([]any{id}, args...)...))
}

// OrgByName returns the organization named name, compared case-insensitively as logins are; when two names differ
// only in case, only the exact one is found.
func (s *Store) OrgByName(ctx context.Context, name string) (Org, error) {
	orgs, _, err := s.ListOrgs(ctx, Scope{}, Query{Page: Page{PageSize: 8},
		Filter: [][]Cond{{{Column: "name", Value: LikeLiteral(name), Like: true}}}})
	if err != nil {
		return Org{}, err
	}
	for _, o := range orgs {
		if o.Name == name || len(orgs) == 1 {
			return o, nil
		}
	}
	return Org{}, ErrNotFound
}

// ListOrgs pages through the organizations the scope may see, by name.
func (s *Store) ListOrgs(ctx context.Context, sc Scope, q Query) ([]Org, int, error) {
	cond, args := sc.where("id")
	return list(ctx, s, "SELECT "+orgColumns+" FROM organizations", "SELECT COUNT(*) FROM organizations", cond, args, q, "name, id", scanOrg)
}

// AllOrgs returns every organization the scope may see, by name: for lists that add what has no row.
func (s *Store) AllOrgs(ctx context.Context, sc Scope) ([]Org, error) {
	cond, args := sc.where("id")
	return all(ctx, s, "SELECT "+orgColumns+" FROM organizations WHERE 1 = 1"+cond+" ORDER BY name, id", args, scanOrg)
}

// UpdateOrg changes the display name, description and enabled flag of an organization.
func (s *Store) UpdateOrg(ctx context.Context, o Org) (Org, error) {
	res, err := s.exec(ctx, "UPDATE organizations SET display_name = ?, description = ?, enabled = ?, updated_at = ? WHERE id = ?",
		o.DisplayName, o.Description, o.Enabled, now(), o.ID)
	if err != nil {
		return Org{}, err
	}
	if err := mustAffect(res); err != nil {
		return Org{}, err
	}
	return s.GetOrg(ctx, Scope{}, o.ID)
}

// DeleteOrg removes an organization, its users and catalogs. It is refused with ErrConflict while the
// organization still has VDCs: those own namespaces, which must go first.
func (s *Store) DeleteOrg(ctx context.Context, id string) error {
	res, err := s.exec(ctx, "DELETE FROM organizations WHERE id = ?", id)
	if err != nil {
		return err
	}
	return mustAffect(res)
}
