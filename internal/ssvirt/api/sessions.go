package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/auth"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// SystemOrgName is the organization name system administrators log in with, as in Cloud Director.
const SystemOrgName = "System"

// systemOrgURN names the System organization, which has no row: Cloud Director's own id for it, a URN like
// every organization's, so that clients which look it up by name can read it by id.
const systemOrgURN = "urn:vcloud:org:a93c9db9-7471-3192-8d09-a8f7eeda85f9"

// HeaderTenantContext is how Cloud Director's clients ask, as a system administrator, to act inside one
// organization: the organization's id, bare or as a URN.
const HeaderTenantContext = "X-VMWARE-VCLOUD-TENANT-CONTEXT"

// Principal is the authenticated caller.
type Principal struct {
	UserID, Username, OrgID, Role, TokenID string
	ExpiresAt                              time.Time
	// tenantContext narrows a system administrator's scope to one organization.
	tenantContext string
}

type principalKey struct{}

func principal(r *http.Request) Principal { return r.Context().Value(principalKey{}).(Principal) }

// Scope is what the caller may see: everything for a system administrator, its organization otherwise.
func (p Principal) Scope() store.Scope {
	if p.Role == store.RoleSystemAdmin {
		return store.Scope{OrgID: p.tenantContext}
	}
	return store.Scope{OrgID: p.OrgID}
}

func (p Principal) sysAdmin() bool { return p.Role == store.RoleSystemAdmin }
func (p Principal) orgAdmin() bool { return p.Role == store.RoleOrgAdmin || p.sysAdmin() }

var errUnauthorized = &apiError{http.StatusUnauthorized, CodeUnauthorized, "authentication required: log in with POST /cloudapi/1.0.0/sessions and send the token as 'Authorization: Bearer <token>' or in X-VMWARE-VCLOUD-ACCESS-TOKEN"}

// bearerToken reads the token from "Authorization: Bearer" (the scheme in any case, RFC 9110 §11.1: Cloud
// Director's Go SDK sends "bearer") or from X-VMWARE-VCLOUD-ACCESS-TOKEN, where Cloud Director's clients also
// send it (and only there when they log out). Two different tokens in one request are refused, not chosen from.
func bearerToken(r *http.Request) (string, error) {
	var fromAuth string
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return "", errUnauthorized
		}
		fromAuth = strings.TrimSpace(token)
	}
	fromHeader := strings.TrimSpace(r.Header.Get(HeaderAccessToken))
	switch {
	case fromAuth != "" && fromHeader != "" && fromAuth != fromHeader:
		return "", &apiError{http.StatusUnauthorized, CodeUnauthorized, "the request carries two different tokens"}
	case fromAuth != "":
		return fromAuth, nil
	case fromHeader != "":
		return fromHeader, nil
	}
	return "", errUnauthorized
}

func (s *Server) authenticate(r *http.Request) (Principal, error) {
	token, err := bearerToken(r)
	if err != nil {
		return Principal{}, err
	}
	c, err := s.issuer.Verify(token)
	if err != nil {
		return Principal{}, &apiError{http.StatusUnauthorized, CodeUnauthorized, "the token is not valid: log in again"}
	}
	revoked, err := s.store.SessionRevoked(r.Context(), c.ID)
	if err != nil {
		return Principal{}, err
	}
	if revoked {
		return Principal{}, &apiError{http.StatusUnauthorized, CodeUnauthorized, "the session was logged out: log in again"}
	}
	// Disabled or deleted accounts lose their sessions at once, not at expiry; so does an account whose password
	// changed. The row is the shared database's, so this holds on every replica.
	u, err := s.store.GetUser(r.Context(), store.Scope{}, c.Subject)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !u.Enabled) {
		return Principal{}, &apiError{http.StatusUnauthorized, CodeUnauthorized, "the account is disabled or gone"}
	}
	if err != nil {
		return Principal{}, err
	}
	if c.Epoch != u.SessionEpoch {
		return Principal{}, &apiError{http.StatusUnauthorized, CodeUnauthorized, "the account's password changed since this session began: log in again"}
	}
	p := Principal{UserID: u.ID, Username: u.Username, OrgID: u.OrgID, Role: u.Role, TokenID: c.ID, ExpiresAt: c.ExpiresAt.Time}
	return p, s.tenantContext(r, &p)
}

// tenantContext applies X-VMWARE-VCLOUD-TENANT-CONTEXT: a system administrator's scope narrows to the
// organization; anyone else may only name their own (a context never widens what a caller sees).
func (s *Server) tenantContext(r *http.Request, p *Principal) error {
	raw := r.Header.Get(HeaderTenantContext)
	if raw == "" {
		return nil
	}
	id := strings.TrimPrefix(raw, "urn:vcloud:org:")
	if !p.sysAdmin() {
		if id != p.OrgID {
			return noAccess("organization " + raw)
		}
		return nil
	}
	if _, ok := naming.ParseURN(naming.KindOrg, naming.URN(naming.KindOrg, id)); !ok {
		return noAccess("organization " + raw)
	}
	if _, err := s.store.GetOrg(r.Context(), store.Scope{}, id); errors.Is(err, store.ErrNotFound) {
		return noAccess("organization " + raw)
	} else if err != nil {
		return err
	}
	p.tenantContext = id
	return nil
}

// Session is the answer to a login.
type Session struct {
	ID               string    `json:"id"`
	User             Ref       `json:"user"`
	Org              Ref       `json:"org"`
	Roles            []string  `json:"roles"`
	SessionExpiresAt time.Time `json:"sessionExpiresAt"`
}

// Token headers, as Cloud Director sends them.
const (
	HeaderAccessToken = "X-VMWARE-VCLOUD-ACCESS-TOKEN"
	HeaderTokenType   = "X-VMWARE-VCLOUD-TOKEN-TYPE"
)

// login takes HTTP basic credentials "user@org:password" (or "user:password") and answers the session with
// the bearer token in X-VMWARE-VCLOUD-ACCESS-TOKEN. Every failure is the same 401, so that it tells nothing
// about which accounts exist.
func (s *Server) login(w http.ResponseWriter, r *http.Request) error { return s.loginAs(w, r, false) }

// providerLogin is Cloud Director's login for the System organization (/sessions/provider): only system
// administrators get a session there; everyone else gets the same 401 as a wrong password.
func (s *Server) providerLogin(w http.ResponseWriter, r *http.Request) error {
	return s.loginAs(w, r, true)
}

func (s *Server) loginAs(w http.ResponseWriter, r *http.Request, provider bool) error {
	name, password, ok := r.BasicAuth()
	if !ok {
		return &apiError{http.StatusUnauthorized, CodeUnauthorized, "log in with HTTP basic authentication: user@organization:password"}
	}
	refused := &apiError{http.StatusUnauthorized, CodeUnauthorized, "wrong user name, organization or password"}
	u, err := s.loginUser(r, name)
	if errors.Is(err, store.ErrNotFound) {
		auth.SpendLoginTime(password)
		return refused
	}
	if err != nil {
		return err
	}
	if !auth.CheckPassword(u.PasswordHash, password) || !u.Enabled || (provider && u.Role != store.RoleSystemAdmin) {
		return refused
	}
	org, err := s.orgRef(r.Context(), u.OrgID)
	if err != nil {
		return err
	}
	if u.OrgID != "" {
		o, err := s.store.GetOrg(r.Context(), store.Scope{}, u.OrgID)
		if err != nil {
			return err
		}
		if !o.Enabled {
			return &apiError{http.StatusUnauthorized, CodeUnauthorized, "the organization is disabled"}
		}
	}
	token, claims, err := s.issuer.Issue(u.ID, u.Username, u.OrgID, u.Role, u.SessionEpoch)
	if err != nil {
		return err
	}
	w.Header().Set(HeaderAccessToken, token)
	w.Header().Set(HeaderTokenType, "Bearer")
	writeJSON(w, http.StatusOK, Session{
		ID: naming.URN(naming.KindSession, claims.ID), User: Ref{Name: u.Username, ID: naming.URN(naming.KindUser, u.ID)},
		Org: org, Roles: []string{u.Role}, SessionExpiresAt: claims.ExpiresAt.Time,
	})
	return nil
}

// loginUser finds the account "user@organization" names ("System" for system administrators); a bare "user"
// names the one account of that name, if only one organization has it.
func (s *Server) loginUser(r *http.Request, name string) (store.User, error) {
	username, orgName, hasOrg := strings.Cut(name, "@")
	switch {
	case !hasOrg:
		users, err := s.store.UsersNamed(r.Context(), username)
		if err != nil {
			return store.User{}, err
		}
		if len(users) != 1 {
			return store.User{}, store.ErrNotFound
		}
		return users[0], nil
	case strings.EqualFold(orgName, SystemOrgName):
		return s.store.UserByName(r.Context(), "", username)
	}
	o, err := s.store.OrgByName(r.Context(), orgName)
	if err != nil {
		return store.User{}, err
	}
	return s.store.UserByName(r.Context(), o.ID, username)
}

func (s *Server) orgRef(ctx context.Context, orgID string) (Ref, error) {
	if orgID == "" {
		return Ref{Name: SystemOrgName, ID: systemOrgURN}, nil
	}
	o, err := s.store.GetOrg(ctx, store.Scope{}, orgID)
	if err != nil {
		return Ref{}, err
	}
	return Ref{Name: o.Name, ID: naming.URN(naming.KindOrg, o.ID)}, nil
}

// ownSession checks that the path names the caller's session ("current" does).
func ownSession(r *http.Request, p Principal) error {
	id := r.PathValue("sessionId")
	if id == "current" || id == naming.URN(naming.KindSession, p.TokenID) {
		return nil
	}
	return noAccess("session " + id)
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := ownSession(r, p); err != nil {
		return err
	}
	org, err := s.orgRef(r.Context(), p.OrgID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, Session{
		ID: naming.URN(naming.KindSession, p.TokenID), User: Ref{Name: p.Username, ID: naming.URN(naming.KindUser, p.UserID)},
		Org: org, Roles: []string{p.Role}, SessionExpiresAt: p.ExpiresAt,
	})
	return nil
}

// logout revokes the caller's token until it would have expired.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := ownSession(r, p); err != nil {
		return err
	}
	return s.endSession(w, r, p)
}

// logoutLoginURL is DELETE on the login URL, which is how Cloud Director's clients log out.
func (s *Server) logoutLoginURL(w http.ResponseWriter, r *http.Request) error {
	return s.endSession(w, r, principal(r))
}

func (s *Server) endSession(w http.ResponseWriter, r *http.Request, p Principal) error {
	if err := s.store.RevokeSession(r.Context(), p.TokenID, p.ExpiresAt); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
