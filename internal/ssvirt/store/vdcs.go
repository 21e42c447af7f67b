package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// VDC states: what the VDC's namespace is known to be.
const (
	// StatePending: the database changed and Kubernetes has not (yet) been brought in line.
	StatePending = "PENDING"
	// StateReady: the namespace, quota and policy matched the row when last written.
	StateReady = "READY"
	// StateDeleting: deleted through the API; the row stays, hidden, until the namespace is gone.
	StateDeleting = "DELETING"
)

// VDC is a virtual data centre: one namespace with a quota. Limits of 0 mean unlimited.
type VDC struct {
	ID, OrgID, OrgName, Name, Description string
	Enabled                               bool
	CPUMillicores, MemoryMiB, StorageGiB  int64
	Namespace, State                      string
	CreatedAt, UpdatedAt                  time.Time
}

const vdcSelect = `SELECT v.id, v.org_id, o.name, v.name, v.description, v.enabled, v.cpu_millicores, v.memory_mib,
 v.storage_gib, v.namespace, v.k8s_state, v.created_at, v.updated_at FROM vdcs v JOIN organizations o ON o.id = v.org_id`

func scanVDC(row scanner) (VDC, error) {
	var v VDC
	var created, updated int64
	err := row.Scan(&v.ID, &v.OrgID, &v.OrgName, &v.Name, &v.Description, &v.Enabled, &v.CPUMillicores, &v.MemoryMiB,
		&v.StorageGiB, &v.Namespace, &v.State, &created, &updated)
	v.CreatedAt, v.UpdatedAt = fromMillis(created), fromMillis(updated)
	return v, classify(err)
}

// maxNamespaceAttempts bounds the search for a free namespace name; each attempt after the first has a
// different hash suffix, so running out means something other than bad luck.
const maxNamespaceAttempts = 8

// CreateVDC inserts v with a new ID and state (StatePending or StateReady is up to the caller) and the first
// name namespaces(attempt) returns that no VDC and no tombstone holds. A name of the same organization that is
// taken is ErrConflict.
func (s *Store) CreateVDC(ctx context.Context, v VDC, namespaces func(vdcID string, attempt int) string) (VDC, error) {
	v.ID = uuid.NewString()
	t := now()
	v.CreatedAt, v.UpdatedAt = fromMillis(t), fromMillis(t)
	for attempt := range maxNamespaceAttempts {
		v.Namespace = namespaces(v.ID, attempt)
		res, err := s.exec(ctx, `INSERT INTO vdcs (id, org_id, name, description, enabled, cpu_millicores, memory_mib,
 storage_gib, namespace, k8s_state, created_at, updated_at)
 SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM namespace_tombstones WHERE namespace = ?)`,
			v.ID, v.OrgID, v.Name, v.Description, v.Enabled, v.CPUMillicores, v.MemoryMiB, v.StorageGiB, v.Namespace,
			v.State, t, t, v.Namespace)
		if err != nil {
			if errors.Is(err, ErrConflict) && strings.Contains(err.Error(), "namespace") {
				continue // another VDC holds the name: try the next
			}
			return VDC{}, err
		}
		if mustAffect(res) == nil {
			return s.getVDC(ctx, v.ID)
		}
		// a tombstone holds the name
	}
	return VDC{}, fmt.Errorf("no free namespace name for VDC %q after %d attempts", v.Name, maxNamespaceAttempts)
}

// GetVDC returns a VDC the scope may see; VDCs being deleted are not found.
func (s *Store) GetVDC(ctx context.Context, sc Scope, id string) (VDC, error) {
	cond, args := sc.where("v.org_id")
	return scanVDC(s.queryRow(ctx, vdcSelect+" WHERE v.id = ? AND v.k8s_state <> 'DELETING'"+cond, append([]any{id}, args...)...))
}

// getVDC returns any VDC, also one being deleted.
func (s *Store) getVDC(ctx context.Context, id string) (VDC, error) {
	return scanVDC(s.queryRow(ctx, vdcSelect+" WHERE v.id = ?", id))
}

// ListVDCs pages through the VDCs the scope may see (orgID, when not empty, narrows further), by name.
func (s *Store) ListVDCs(ctx context.Context, sc Scope, orgID string, q Query) ([]VDC, int, error) {
	cond, args := sc.where("v.org_id")
	if orgID != "" {
		cond += " AND v.org_id = ?"
		args = append(args, orgID)
	}
	cond = " AND v.k8s_state <> 'DELETING'" + cond
	return list(ctx, s, vdcSelect, "SELECT COUNT(*) FROM vdcs v", cond, args, q, "v.name, v.id", scanVDC)
}

// AllVDCs returns every VDC, also those being deleted: what the reconciler brings Kubernetes in line with.
func (s *Store) AllVDCs(ctx context.Context) ([]VDC, error) {
	return all(ctx, s, vdcSelect+" ORDER BY v.id", nil, scanVDC)
}

// UpdateVDC writes v's description, enabled flag, limits and state, and returns what the row held before (for
// compensation when Kubernetes refuses the change).
func (s *Store) UpdateVDC(ctx context.Context, v VDC) (before VDC, err error) {
	if before, err = s.getVDC(ctx, v.ID); err != nil {
		return VDC{}, err
	}
	if before.State == StateDeleting {
		return VDC{}, ErrNotFound
	}
	res, err := s.exec(ctx, `UPDATE vdcs SET description = ?, enabled = ?, cpu_millicores = ?, memory_mib = ?, storage_gib = ?,
 k8s_state = ?, updated_at = ? WHERE id = ? AND k8s_state <> 'DELETING'`,
		v.Description, v.Enabled, v.CPUMillicores, v.MemoryMiB, v.StorageGiB, v.State, now(), v.ID)
	if err != nil {
		return VDC{}, err
	}
	return before, mustAffect(res)
}

// SetVDCState records what the reconciler or a handler found Kubernetes to be, unless the VDC is being
// deleted (a deletion is never undone by a late success).
func (s *Store) SetVDCState(ctx context.Context, id, state string) error {
	_, err := s.exec(ctx, "UPDATE vdcs SET k8s_state = ? WHERE id = ? AND k8s_state <> 'DELETING'", state, id)
	return err
}

// MarkVDCDeleting hides a VDC from the API until the reconciler has removed its namespace; ErrConflict while
// it still has vApps.
func (s *Store) MarkVDCDeleting(ctx context.Context, sc Scope, id string) error {
	if _, err := s.GetVDC(ctx, sc, id); err != nil {
		return err
	}
	var n int
	if err := s.queryRow(ctx, "SELECT COUNT(*) FROM vapps WHERE vdc_id = ?", id).Scan(&n); err != nil {
		return classify(err)
	}
	if n > 0 {
		return fmt.Errorf("%w: the VDC has %d vApps", ErrConflict, n)
	}
	res, err := s.exec(ctx, "UPDATE vdcs SET k8s_state = 'DELETING', updated_at = ? WHERE id = ?", now(), id)
	if err != nil {
		return err
	}
	return mustAffect(res)
}

// DeleteVDCRow removes a VDC's row once its namespace is gone.
func (s *Store) DeleteVDCRow(ctx context.Context, id string) error {
	res, err := s.exec(ctx, "DELETE FROM vdcs WHERE id = ?", id)
	if err != nil {
		return err
	}
	return mustAffect(res)
}

// RollbackVDC removes a VDC whose namespace could not be made, leaving a tombstone in the same transaction so
// that whatever part of the namespace did get made is deleted by the reconciler.
func (s *Store) RollbackVDC(ctx context.Context, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	defer func() { _ = tx.Rollback() }()
	var ns string
	if err := tx.QueryRowContext(ctx, s.q("SELECT namespace FROM vdcs WHERE id = ?"), id).Scan(&ns); err != nil {
		return classify(err)
	}
	if _, err := tx.ExecContext(ctx, s.q("DELETE FROM vdcs WHERE id = ?"), id); err != nil {
		return classify(err)
	}
	if _, err := tx.ExecContext(ctx, s.q("INSERT INTO namespace_tombstones (namespace, vdc_id, created_at) VALUES (?, ?, ?)"),
		ns, id, now()); err != nil {
		return classify(err)
	}
	return classify(tx.Commit())
}

// Tombstone is a namespace name whose VDC was rolled back.
type Tombstone struct{ Namespace, VDCID string }

// Tombstones lists the namespaces the reconciler still has to make sure are gone.
func (s *Store) Tombstones(ctx context.Context) ([]Tombstone, error) {
	return all(ctx, s, "SELECT namespace, vdc_id FROM namespace_tombstones ORDER BY namespace", nil,
		func(row scanner) (Tombstone, error) {
			var t Tombstone
			return t, classify(row.Scan(&t.Namespace, &t.VDCID))
		})
}

// DeleteTombstone forgets a namespace that is gone.
func (s *Store) DeleteTombstone(ctx context.Context, namespace string) error {
	_, err := s.exec(ctx, "DELETE FROM namespace_tombstones WHERE namespace = ?", namespace)
	return err
}

// VDCByNamespace returns the VDC, also one being deleted, whose namespace is ns.
func (s *Store) VDCByNamespace(ctx context.Context, ns string) (VDC, error) {
	return scanVDC(s.queryRow(ctx, vdcSelect+" WHERE v.namespace = ?", ns))
}

// IsTombstone says whether ns is the namespace of a rolled-back VDC.
func (s *Store) IsTombstone(ctx context.Context, ns string) (bool, error) {
	var n int
	err := s.queryRow(ctx, "SELECT COUNT(*) FROM namespace_tombstones WHERE namespace = ?", ns).Scan(&n)
	return n > 0, classify(err)
}
