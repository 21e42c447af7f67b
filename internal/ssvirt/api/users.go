package api

import (
	"errors"
	"net/http"
	"regexp"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/auth"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// User is an account in CloudAPI's shape: one role in roleEntityRefs, the organization in orgEntityRef. The
// password is only ever read, never written back.
type User struct {
	ID             string `json:"id,omitempty"`
	Username       string `json:"username"`
	Password       string `json:"password,omitempty"`
	Enabled        *bool  `json:"enabled,omitempty"`
	RoleEntityRefs []Ref  `json:"roleEntityRefs"`
	OrgEntityRef   *Ref   `json:"orgEntityRef,omitempty"`
	// ProviderType is where the account comes from: only LOCAL accounts exist.
	ProviderType string `json:"providerType,omitempty"`
}

const providerLocal = "LOCAL"

var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func userOut(u store.User) User {
	enabled := u.Enabled
	org := Ref{Name: SystemOrgName, ID: systemOrgURN}
	if u.OrgID != "" {
		org = Ref{Name: u.OrgName, ID: naming.URN(naming.KindOrg, u.OrgID)}
	}
	return User{ID: naming.URN(naming.KindUser, u.ID), Username: u.Username, Enabled: &enabled,
		RoleEntityRefs: []Ref{roleRef(u.Role)}, OrgEntityRef: &org, ProviderType: providerLocal}
}

var userFields = fields{
	"id": urn("u.id", naming.KindUser), "username": text("u.username"), "enabled": boolean("u.enabled"),
	"orgEntityRef.id": urn("u.org_id", naming.KindOrg), "roleEntityRefs.name": text("u.role"),
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if !p.orgAdmin() {
		return forbidden("only administrators list users")
	}
	return writeList(w, r, userFields, func(q store.Query) ([]store.User, int, error) {
		return s.store.ListUsers(r.Context(), p.Scope(), q)
	}, userOut)
}

// role reads the one role of roleEntityRefs, by id or by name.
func (in User) role() (string, error) {
	if len(in.RoleEntityRefs) != 1 {
		return "", badRequest("roleEntityRefs: exactly one role (GET /cloudapi/1.0.0/roles lists them)")
	}
	ref := in.RoleEntityRefs[0]
	for _, name := range roleNames {
		if (ref.ID != "" && ref.ID == roleRef(name).ID) || (ref.ID == "" && ref.Name == name) {
			return name, nil
		}
	}
	return "", badRequest("roleEntityRefs: no role " + ref.ID + ref.Name + " (GET /cloudapi/1.0.0/roles lists them)")
}

func (in User) checkProvider() error {
	if in.ProviderType != "" && in.ProviderType != providerLocal {
		return badRequest("providerType: only LOCAL accounts exist here")
	}
	return nil
}

// createUser: system administrators create any account; organization administrators create organization
// administrators and vApp users of their own organization. The organization is orgEntityRef, or the tenant
// context, or the caller's own.
func (s *Server) createUser(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if !p.orgAdmin() {
		return forbidden("only administrators create users")
	}
	var in User
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.ID != "" {
		return badRequest("id is set by the server")
	}
	if !usernamePattern.MatchString(in.Username) {
		return badRequest("username: 1 to 128 letters, digits, '.', '_' or '-'")
	}
	role, err := in.role()
	if err != nil {
		return err
	}
	if err := in.checkProvider(); err != nil {
		return err
	}
	u := store.User{Username: in.Username, Role: role, Enabled: in.Enabled == nil || *in.Enabled}
	if role == store.RoleSystemAdmin {
		if !p.sysAdmin() {
			return forbidden("only system administrators create system administrators")
		}
		if in.OrgEntityRef != nil && in.OrgEntityRef.ID != systemOrgURN {
			return badRequest("a system administrator belongs to the System organization")
		}
	} else {
		orgID := p.Scope().OrgID
		if in.OrgEntityRef != nil {
			id, ok := naming.ParseURN(naming.KindOrg, in.OrgEntityRef.ID)
			if !ok {
				return badRequest("orgEntityRef.id is not an organization URN")
			}
			orgID = id
		}
		if orgID == "" {
			return badRequest("orgEntityRef.id is required for this role")
		}
		if _, err := s.store.GetOrg(r.Context(), p.Scope(), orgID); errors.Is(err, store.ErrNotFound) {
			return noAccess("organization " + naming.URN(naming.KindOrg, orgID))
		} else if err != nil {
			return err
		}
		u.OrgID = orgID
	}
	hash, err := auth.HashPassword(in.Password)
	if err != nil {
		return badRequest("password: " + err.Error())
	}
	u.PasswordHash = hash
	created, err := s.store.CreateUser(r.Context(), u)
	if errors.Is(err, store.ErrConflict) {
		return conflict("the organization has a user named " + in.Username)
	}
	if err != nil {
		return err
	}
	created, err = s.store.GetUser(r.Context(), store.Scope{}, created.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, userOut(created))
	return nil
}

// user resolves {userId}: administrators see their scope's accounts, everyone sees their own.
func (s *Server) user(r *http.Request) (store.User, error) {
	p := principal(r)
	raw := r.PathValue("userId")
	id, ok := naming.ParseURN(naming.KindUser, raw)
	if !ok || (!p.orgAdmin() && id != p.UserID) {
		return store.User{}, noAccess("user " + raw)
	}
	u, err := s.store.GetUser(r.Context(), p.Scope(), id)
	if errors.Is(err, store.ErrNotFound) {
		return u, noAccess("user " + raw)
	}
	return u, err
}

func (s *Server) getUser(w http.ResponseWriter, r *http.Request) error {
	u, err := s.user(r)
	return writeOne(w, http.StatusOK, userOut(u), err)
}

// updateUser changes the enabled flag, the role and (when given) the password; the name and the organization
// stay. Only administrators change accounts, and only system administrators make system administrators.
func (s *Server) updateUser(w http.ResponseWriter, r *http.Request) error {
	cur, err := s.user(r)
	if err != nil {
		return err
	}
	p := principal(r)
	if !p.orgAdmin() {
		return forbidden("only administrators change users")
	}
	var in User
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.ID != "" && in.ID != naming.URN(naming.KindUser, cur.ID) {
		return badRequest("id does not match the path")
	}
	if in.Username != cur.Username {
		return badRequest("a user's name cannot change")
	}
	if in.OrgEntityRef != nil && in.OrgEntityRef.ID != userOut(cur).OrgEntityRef.ID {
		return badRequest("a user's organization cannot change")
	}
	if err := in.checkProvider(); err != nil {
		return err
	}
	role, err := in.role()
	if err != nil {
		return err
	}
	if (role == store.RoleSystemAdmin) != (cur.Role == store.RoleSystemAdmin) {
		return badRequest("a system administrator stays one, and nobody else becomes one")
	}
	if in.Enabled != nil {
		cur.Enabled = *in.Enabled
	}
	if cur.ID == p.UserID && (!cur.Enabled || role != cur.Role) {
		return badRequest("you cannot disable yourself or change your own role")
	}
	cur.Role = role
	if in.Password != "" {
		if cur.PasswordHash, err = auth.HashPassword(in.Password); err != nil {
			return badRequest("password: " + err.Error())
		}
	}
	if err := s.store.UpdateUser(r.Context(), cur); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, userOut(cur))
	return nil
}

// deleteUser removes an account; its sessions end with it. Nobody deletes themselves (so an organization or the
// system keeps the administrator who could undo a mistake).
func (s *Server) deleteUser(w http.ResponseWriter, r *http.Request) error {
	u, err := s.user(r)
	if err != nil {
		return err
	}
	p := principal(r)
	if !p.orgAdmin() {
		return forbidden("only administrators delete users")
	}
	if u.ID == p.UserID {
		return badRequest("you cannot delete yourself")
	}
	if err := s.store.DeleteUser(r.Context(), p.Scope(), u.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
