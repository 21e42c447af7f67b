package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// vApp statuses. The vApp follows its TemplateInstance's conditions.
const (
	VAppInstantiating = "INSTANTIATING"
	VAppDeployed      = "DEPLOYED"
	VAppFailed        = "FAILED"
	VAppDeleting      = "DELETING"
)

// VApp is one instantiation of a catalog item in a VDC: a TemplateInstance named after the vApp's ID.
// RequestDigest identifies what the instantiation asked for (see the API's retries); "" matches nothing.
type VApp struct {
	ID, OrgID, VDCID, Name, Description    string
	CatalogItemID, TemplateName, Namespace string
	Status, StatusMessage, CreatedBy       string
	RequestDigest                          string
	CreatedAt, UpdatedAt                   time.Time
}

const vappColumns = `id, org_id, vdc_id, name, description, catalog_item_id, template_name, namespace, status, status_message,
 created_by, request_digest, created_at, updated_at`

func scanVApp(row scanner) (VApp, error) {
	var a VApp
	var created, updated int64
	err := row.Scan(&a.ID, &a.OrgID, &a.VDCID, &a.Name, &a.Description, &a.CatalogItemID, &a.TemplateName, &a.Namespace,
		&a.Status, &a.StatusMessage, &a.CreatedBy, &a.RequestDigest, &created, &updated)
	a.CreatedAt, a.UpdatedAt = fromMillis(created), fromMillis(updated)
	return a, classify(err)
}

// CreateVApp inserts a with a new ID in state VAppInstantiating.
func (s *Store) CreateVApp(ctx context.Context, a VApp) (VApp, error) {
	a.ID = uuid.NewString()
	t := now()
	a.CreatedAt, a.UpdatedAt = fromMillis(t), fromMillis(t)
	a.Status = VAppInstantiating
	_, err := s.exec(ctx, "INSERT INTO vapps ("+vappColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		a.ID, a.OrgID, a.VDCID, a.Name, a.Description, a.CatalogItemID, a.TemplateName, a.Namespace, a.Status,
		a.StatusMessage, a.CreatedBy, a.RequestDigest, t, t)
	return a, err
}

// GetVApp returns a vApp the scope may see.
func (s *Store) GetVApp(ctx context.Context, sc Scope, id string) (VApp, error) {
	cond, args := sc.where("org_id")
	return scanVApp(s.queryRow(ctx, "SELECT "+vappColumns+" FROM vapps WHERE id = ?"+cond, append([]any{id}, args...)...))
}

// VAppNamed returns the vApp of that name in the VDC.
func (s *Store) VAppNamed(ctx context.Context, vdcID, name string) (VApp, error) {
	return scanVApp(s.queryRow(ctx, "SELECT "+vappColumns+" FROM vapps WHERE vdc_id = ? AND name = ?", vdcID, name))
}

// ListVApps pages through the vApps the scope may see (vdcID, when not empty, narrows further), by name.
func (s *Store) ListVApps(ctx context.Context, sc Scope, vdcID string, q Query) ([]VApp, int, error) {
	cond, args := sc.where("org_id")
	if vdcID != "" {
		cond += " AND vdc_id = ?"
		args = append(args, vdcID)
	}
	return list(ctx, s, "SELECT "+vappColumns+" FROM vapps", "SELECT COUNT(*) FROM vapps", cond, args, q, "name, id", scanVApp)
}

// SetVAppStatus records what the vApp's TemplateInstance says; a vApp being deleted stays so.
func (s *Store) SetVAppStatus(ctx context.Context, id, status, message string) error {
	_, err := s.exec(ctx, "UPDATE vapps SET status = ?, status_message = ?, updated_at = ? WHERE id = ? AND status <> 'DELETING'",
		status, message, now(), id)
	return err
}

// DeleteVApp removes a vApp's row (its TemplateInstance is deleted first by the caller).
func (s *Store) DeleteVApp(ctx context.Context, sc Scope, id string) error {
	cond, args := sc.where("org_id")
	res, err := s.exec(ctx, "DELETE FROM vapps WHERE id = ?"+cond, append([]any{id}, args...)...)
	if err != nil {
		return err
	}
	return mustAffect(res)
}

// MarkVAppDeleting records that the vApp's TemplateInstance is being deleted.
func (s *Store) MarkVAppDeleting(ctx context.Context, sc Scope, id string) error {
	cond, args := sc.where("org_id")
	res, err := s.exec(ctx, "UPDATE vapps SET status = 'DELETING', updated_at = ? WHERE id = ?"+cond, append([]any{now(), id}, args...)...)
	if err != nil {
		return err
	}
	return mustAffect(res)
}

// InstantiatingSince lists the vApps still instantiating whose rows were written before t, oldest first.
func (s *Store) InstantiatingSince(ctx context.Context, t time.Time) ([]VApp, error) {
	return all(ctx, s, "SELECT "+vappColumns+" FROM vapps WHERE status = 'INSTANTIATING' AND created_at < ? ORDER BY created_at, id",
		[]any{t.UnixMilli()}, scanVApp)
}

// AbandonVApp removes a vApp still instantiating and ends its instantiation task in error with message, in one
// transaction: what a process that stopped between writing the row and creating the TemplateInstance left. It
// says whether there was such a vApp.
func (s *Store) AbandonVApp(ctx context.Context, id, message string) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, classify(err)
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, s.q("DELETE FROM vapps WHERE id = ? AND status = 'INSTANTIATING'"), id)
	if err != nil {
		return false, classify(err)
	}
	if mustAffect(res) != nil {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, s.q("UPDATE tasks SET status = 'error', message = ?, ended_at = ? WHERE owner_id = ? AND operation = ? AND status = 'running'"),
		message, now(), id, OpInstantiate); err != nil {
		return false, classify(err)
	}
	return true, classify(tx.Commit())
}
