package api

import (
	"errors"
	"net/http"
	"regexp"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/auth"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// User is an account in the API; the password is only ever read, never written back.
type User struct {
	ID       string `json:"id,omitempty"`
	Username string `json:"username"`
	Password string `json:"password,omitempty"`
	Role     string `json:"roleName"`
	Org      *Ref   `json:"org,omitempty"`
	Enabled  *bool  `json:"enabled,omitempty"`
}

var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func userOut(u store.User) User {
	enabled := u.Enabled
	out := User{ID: naming.URN(naming.KindUser, u.ID), Username: u.Username, Role: u.Role, Enabled: &enabled}
	if u.OrgID != "" {
		out.Org = &Ref{ID: naming.URN(naming.KindOrg, u.OrgID)}
	}
	return out
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if !p.orgAdmin() {
		return forbidden("only administrators list users")
	}
	pg, err := pageOf(r)
	if err != nil {
		return err
	}
	users, total, err := s.store.ListUsers(r.Context(), p.Scope(), pg)
	if err != nil {
		return err
	}
	out := make([]User, len(users))
	for i, u := range users {
		out[i] = userOut(u)
	}
	writeJSON(w, http.StatusOK, paged(pg, total, out))
	return nil
}

// createUser: system administrators create any account; organization administrators create organization
// administrators and vApp users of their own organization.
func (s *Server) createUser(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if !p.orgAdmin() {
		return forbidden("only administrators create users")
	}
	var in User
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if !usernamePattern.MatchString(in.Username) {
		return badRequest("username: 1 to 128 letters, digits, '.', '_' or '-'")
	}
	u := store.User{Username: in.Username, Role: in.Role, Enabled: in.Enabled == nil || *in.Enabled}
	switch in.Role {
	case store.RoleSystemAdmin:
		if !p.sysAdmin() {
			return forbidden("only system administrators create system administrators")
		}
		if in.Org != nil {
			return badRequest("a system administrator belongs to no organization")
		}
	case store.RoleOrgAdmin, store.RoleVAppUser:
		if in.Org == nil {
			return badRequest("org.id is required for this role")
		}
		orgID, ok := naming.ParseURN(naming.KindOrg, in.Org.ID)
		if !ok {
			return badRequest("org.id is not an organization URN")
		}
		if _, err := s.store.GetOrg(r.Context(), p.Scope(), orgID); errors.Is(err, store.ErrNotFound) {
			return notFound("organization")
		} else if err != nil {
			return err
		}
		u.OrgID = orgID
	default:
		return badRequest("roleName: one of \"System Administrator\", \"Organization Administrator\", \"vApp User\"")
	}
	hash, err := auth.HashPassword(in.Password)
	if err != nil {
		return badRequest("password: " + err.Error())
	}
	u.PasswordHash = hash
	created, err := s.store.CreateUser(r.Context(), u)
	if errors.Is(err, store.ErrConflict) {
		return conflict("a user named " + in.Username + " exists")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, userOut(created))
	return nil
}
