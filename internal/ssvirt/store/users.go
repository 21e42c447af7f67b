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

// User is an account; OrgID is empty for system administrators. PasswordHash is a bcrypt hash.
type User struct {
	ID, Username, OrgID, Role, PasswordHash string
	Enabled                                 bool
	CreatedAt                               time.Time
}

const userColumns = "id, username, org_id, role, password_hash, enabled, created_at"

func scanUser(row interface{ Scan(...any) error }) (User, error) {
	var u User
	var org *string
	var created int64
	err := row.Scan(&u.ID, &u.Username, &org, &u.Role, &u.PasswordHash, &u.Enabled, &created)
	if org != nil {
		u.OrgID = *org
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

// CreateUser inserts u with a new ID.
func (s *Store) CreateUser(ctx context.Context, u User) (User, error) {
	u.ID = uuid.NewString()
	t := now()
	u.CreatedAt = fromMillis(t)
	_, err := s.exec(ctx, "INSERT INTO users ("+userColumns+") VALUES (?, ?, ?, ?, ?, ?, ?)",
		u.ID, u.Username, nullable(u.OrgID), u.Role, u.PasswordHash, u.Enabled, t)
	return u, err
}

// UserByName returns the account username (for logging in).
func (s *Store) UserByName(ctx context.Context, username string) (User, error) {
	return scanUser(s.queryRow(ctx, "SELECT "+userColumns+" FROM users WHERE username = ?", username))
}

// GetUser returns the account id.
func (s *Store) GetUser(ctx context.Context, id string) (User, error) {
	return scanUser(s.queryRow(ctx, "SELECT "+userColumns+" FROM users WHERE id = ?", id))
}

// ListUsers pages through the accounts of the scope, by user name.
func (s *Store) ListUsers(ctx context.Context, sc Scope, p Page) ([]User, int, error) {
	cond, args := sc.where("org_id")
	var total int
	if err := s.queryRow(ctx, "SELECT COUNT(*) FROM users WHERE 1 = 1"+cond, args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	limit, offset := p.limitOffset()
	rows, err := s.db.QueryContext(ctx, s.q("SELECT "+userColumns+" FROM users WHERE 1 = 1"+cond+" ORDER BY username LIMIT ? OFFSET ?"),
		append(args, limit, offset)...)
	if err != nil {
		return nil, 0, classify(err)
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, u)
	}
	return out, total, classify(rows.Err())
}

// CountSystemAdmins says whether the first administrator still has to be created.
func (s *Store) CountSystemAdmins(ctx context.Context) (int, error) {
	var n int
	err := s.queryRow(ctx, "SELECT COUNT(*) FROM users WHERE role = ?", RoleSystemAdmin).Scan(&n)
	return n, classify(err)
}
