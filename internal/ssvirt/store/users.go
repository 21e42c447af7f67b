package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Roles.
const (
	RoleSystemAdmin = "System Administrator"
	RoleOrgAdmin    = "Organization Administrator"
	RoleVAppUser    = "vApp User"
)

// User is an account; OrgID (and OrgName) are empty for system administrators. PasswordHash is a bcrypt hash.
// Names are unique per organization. SessionEpoch counts the password's changes: tokens issued before the last one
// are refused.
type User struct {
	ID, Username, OrgID, OrgName, Role, PasswordHash string
	Enabled                                          bool
	SessionEpoch                                     int64
	CreatedAt                                        time.Time
}

const userSelect = `SELECT u.id, u.username, u.org_id, o.name, u.role, u.password_hash, u.enabled, u.session_epoch, u.created_at
 FROM users u LEFT JOIN organizations o ON o.id = u.org_id`

func scanUser(row scanner) (User, error) {
	var u User
	var org, orgName *string
	var created int64
	err := row.Scan(&u.ID, &u.Username, &org, &orgName, &u.Role, &u.PasswordHash, &u.Enabled, &u.SessionEpoch, &created)
	if org != nil {
		u.OrgID = *org
	}
	if orgName != nil {
		u.OrgName = *orgName
	}
	u.CreatedAt = fromMillis(created)
	return u, classify(err)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// CreateUser inserts u with a new ID; a name the organization already has is ErrConflict.
func (s *Store) CreateUser(ctx context.Context, u User) (User, error) {
	u.ID = uuid.NewString()
	t := now()
	u.CreatedAt = fromMillis(t)
	_, err := s.exec(ctx, "INSERT INTO users (id, username, org_id, role, password_hash, enabled, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
		u.ID, u.Username, nullable(u.OrgID), u.Role, u.PasswordHash, u.Enabled, t)
	return u, err
}

// UserByName returns the account username of organization orgID ("" for system administrators), for logging in.
func (s *Store) UserByName(ctx context.Context, orgID, username string) (User, error) {
	return scanUser(s.queryRow(ctx, userSelect+" WHERE u.username = ? AND COALESCE(u.org_id, '') = ?", username, orgID))
}

// UsersNamed returns every account named username, in any organization (a login that names none).
func (s *Store) UsersNamed(ctx context.Context, username string) ([]User, error) {
	users, _, err := s.ListUsers(ctx, Scope{}, Query{
		Page:   Page{PageSize: 2},
		Filter: [][]Cond{{{Column: "u.username", Value: username}}},
	})
	return users, err
}

// GetUser returns the account id if the scope may see it.
func (s *Store) GetUser(ctx context.Context, sc Scope, id string) (User, error) {
	cond, args := sc.where("u.org_id")
	return scanUser(s.queryRow(ctx, userSelect+" WHERE u.id = ?"+cond, append([]any{id}, args...)...))
}

// ListUsers pages through the accounts of the scope, by user name.
func (s *Store) ListUsers(ctx context.Context, sc Scope, q Query) ([]User, int, error) {
	cond, args := sc.where("u.org_id")
	return list(ctx, s, userSelect, "SELECT COUNT(*) FROM users u", cond, args, q, "u.username, u.id", scanUser)
}

// UpdateUser writes u's role, enabled flag and password hash; a new password hash moves the session epoch on,
// which ends the account's sessions.
func (s *Store) UpdateUser(ctx context.Context, u User) error {
	res, err := s.exec(ctx, `UPDATE users SET role = ?, enabled = ?,
 session_epoch = session_epoch + CASE WHEN password_hash = ? THEN 0 ELSE 1 END, password_hash = ? WHERE id = ?`,
		u.Role, u.Enabled, u.PasswordHash, u.PasswordHash, u.ID)
	if err != nil {
		return err
	}
	return mustAffect(res)
}

// DeleteUser removes an account the scope may see.
func (s *Store) DeleteUser(ctx context.Context, sc Scope, id string) error {
	cond, args := sc.where("org_id")
	res, err := s.exec(ctx, "DELETE FROM users WHERE id = ?"+cond, append([]any{id}, args...)...)
	if err != nil {
		return err
	}
	return mustAffect(res)
}

// CountSystemAdmins says whether the first administrator still has to be created, and whether one may go.
func (s *Store) CountSystemAdmins(ctx context.Context) (int, error) {
	var n int
	err := s.queryRow(ctx, "SELECT COUNT(*) FROM users WHERE role = ?", RoleSystemAdmin).Scan(&n)
	return n, classify(err)
}
