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

// Principal is the authenticated caller.
type Principal struct {
	UserID, Username, OrgID, Role, TokenID string
	ExpiresAt                              time.Time
}

type principalKey struct{}

func principal(r *http.Request) Principal { return r.Context().Value(principalKey{}).(Principal) }

// Scope is what the caller may see: everything for a system administrator, its organization otherwise.
func (p Principal) Scope() store.Scope {
	if p.Role == store.RoleSystemAdmin {
		return store.Scope{}
	}
	return store.Scope{OrgID: p.OrgID}
}

func (p Principal) sysAdmin() bool { return p.Role == store.RoleSystemAdmin }
func (p Principal) orgAdmin() bool { return p.Role == store.RoleOrgAdmin || p.sysAdmin() }

var errUnauthorized = &apiError{http.StatusUnauthorized, CodeUnauthorized, "authentication required: log in with POST /cloudapi/1.0.0/sessions and send the token as 'Authorization: Bearer <token>'"}

func (s *Server) authenticate(r *http.Request) (Principal, error) {
	// The scheme is case-insensitive (RFC 9110 §11.1): Cloud Director's Go SDK sends "bearer".
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return Principal{}, errUnauthorized
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
	// Disabled or deleted accounts lose their sessions at once, not at expiry.
	u, err := s.store.GetUser(r.Context(), c.Subject)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !u.Enabled) {
		return Principal{}, &apiError{http.StatusUnauthorized, CodeUnauthorized, "the account is disabled or gone"}
	}
	if err != nil {
		return Principal{}, err
	}
	return Principal{UserID: u.ID, Username: u.Username, OrgID: u.OrgID, Role: u.Role, TokenID: c.ID, ExpiresAt: c.ExpiresAt.Time}, nil
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
	username, orgName, _ := strings.Cut(name, "@")
	refused := &apiError{http.StatusUnauthorized, CodeUnauthorized, "wrong user name, organization or password"}
	u, err := s.store.UserByName(r.Context(), username)
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
	if orgName != "" && !strings.EqualFold(orgName, org.Name) {
		return refused
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
	token, claims, err := s.issuer.Issue(u.ID, u.Username, u.OrgID, u.Role)
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

func (s *Server) orgRef(ctx context.Context, orgID string) (Ref, error) {
	if orgID == "" {
		return Ref{Name: SystemOrgName, ID: "urn:vcloud:org:system"}, nil
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
	return notFound("session")
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
