// Package api serves ssvirt-api's HTTP API in the shapes of Cloud Director's CloudAPI 1.0.0: sessions,
// organizations, users, VDCs, catalogs and their items, instantiation and vApps, their VMs and power actions, and
// the health endpoints; VDCs, catalogs and items also in the Tenant Manager's shapes (/cloudapi/vcf).
// Every tenant-reachable read goes through a store.Scope derived from the caller's token: another
// organization's entities answer 403, exactly as ones that do not exist (Cloud Director's answer for both).
package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-logr/logr"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/auth"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/vdc"
)

// Server holds the API's dependencies.
type Server struct {
	store   *store.Store
	cluster *kube.Cluster
	issuer  *auth.Issuer
	log     logr.Logger
	// vdcs creates, changes and deletes VDCs: the handlers decide who may and what was asked, it does the rest.
	vdcs *vdc.Service
}

// New returns the API server.
func New(st *store.Store, cluster *kube.Cluster, issuer *auth.Issuer, log logr.Logger) *Server {
	return &Server{store: st, cluster: cluster, issuer: issuer, log: log, vdcs: vdc.New(st, cluster, callerTasks{st}, log)}
}

// Route is one served method and path pattern; Routes is what the OpenAPI document must describe.
type Route struct {
	Method, Pattern string
	public          bool
	handler         func(*Server, http.ResponseWriter, *http.Request) error
}

// Routes lists every route the server answers.
func Routes() []Route {
	return append([]Route{
		{Method: "GET", Pattern: "/healthz", public: true, handler: (*Server).healthz},
		{Method: "GET", Pattern: "/readyz", public: true, handler: (*Server).readyz},
		{Method: "GET", Pattern: "/cloudapi/openapi.yaml", public: true, handler: (*Server).openapi},
		{Method: "GET", Pattern: "/api/versions", public: true, handler: (*Server).versions},
		{Method: "GET", Pattern: "/api/task/{taskId}", handler: (*Server).getTask},

		{Method: "POST", Pattern: "/cloudapi/1.0.0/sessions", public: true, handler: (*Server).login},
		{Method: "DELETE", Pattern: "/cloudapi/1.0.0/sessions", handler: (*Server).logoutLoginURL},
		{Method: "POST", Pattern: "/cloudapi/1.0.0/sessions/provider", public: true, handler: (*Server).providerLogin},
		{Method: "DELETE", Pattern: "/cloudapi/1.0.0/sessions/provider", handler: (*Server).logoutLoginURL},
		{Method: "GET", Pattern: "/cloudapi/1.0.0/sessions/{sessionId}", handler: (*Server).getSession},
		{Method: "DELETE", Pattern: "/cloudapi/1.0.0/sessions/{sessionId}", handler: (*Server).logout},

		{Method: "GET", Pattern: "/cloudapi/1.0.0/orgs", handler: (*Server).listOrgs},
		{Method: "POST", Pattern: "/cloudapi/1.0.0/orgs", handler: (*Server).createOrg},
		{Method: "GET", Pattern: "/cloudapi/1.0.0/orgs/{orgId}", handler: (*Server).getOrg},
		{Method: "PUT", Pattern: "/cloudapi/1.0.0/orgs/{orgId}", handler: (*Server).updateOrg},
		{Method: "DELETE", Pattern: "/cloudapi/1.0.0/orgs/{orgId}", handler: (*Server).deleteOrg},

		{Method: "GET", Pattern: "/cloudapi/1.0.0/users", handler: (*Server).listUsers},
		{Method: "POST", Pattern: "/cloudapi/1.0.0/users", handler: (*Server).createUser},
		{Method: "GET", Pattern: "/cloudapi/1.0.0/users/{userId}", handler: (*Server).getUser},
		{Method: "PUT", Pattern: "/cloudapi/1.0.0/users/{userId}", handler: (*Server).updateUser},
		{Method: "DELETE", Pattern: "/cloudapi/1.0.0/users/{userId}", handler: (*Server).deleteUser},
		{Method: "GET", Pattern: "/cloudapi/1.0.0/roles", handler: (*Server).listRoles},

		{Method: "GET", Pattern: "/api/admin/org/{orgId}/vdcs", handler: (*Server).adminListVDCs},
		{Method: "POST", Pattern: "/api/admin/org/{orgId}/vdcs", handler: (*Server).createVDC},
		{Method: "GET", Pattern: "/api/admin/org/{orgId}/vdcs/{vdcId}", handler: (*Server).adminGetVDC},
		{Method: "PUT", Pattern: "/api/admin/org/{orgId}/vdcs/{vdcId}", handler: (*Server).updateVDC},
		{Method: "DELETE", Pattern: "/api/admin/org/{orgId}/vdcs/{vdcId}", handler: (*Server).deleteVDC},
		{Method: "GET", Pattern: "/cloudapi/1.0.0/vdcs", handler: (*Server).listVDCs},
		{Method: "GET", Pattern: "/cloudapi/1.0.0/vdcs/{vdcId}", handler: (*Server).getVDC},
		{Method: "POST", Pattern: "/cloudapi/1.0.0/vdcs/{vdcId}/actions/instantiateTemplate", handler: (*Server).instantiate},

		{Method: "GET", Pattern: "/cloudapi/1.0.0/catalogs", handler: (*Server).listCatalogs},
		{Method: "POST", Pattern: "/cloudapi/1.0.0/catalogs", handler: (*Server).createCatalog},
		{Method: "GET", Pattern: "/cloudapi/1.0.0/catalogs/{catalogId}", handler: (*Server).getCatalog},
		{Method: "DELETE", Pattern: "/cloudapi/1.0.0/catalogs/{catalogId}", handler: (*Server).deleteCatalog},
		{Method: "GET", Pattern: "/cloudapi/1.0.0/catalogs/{catalogId}/catalogItems", handler: (*Server).listCatalogItems},
		{Method: "GET", Pattern: "/cloudapi/1.0.0/catalogs/{catalogId}/catalogItems/{itemId}", handler: (*Server).getCatalogItem},

		// The Tenant Manager's shapes of the same VDCs, catalogs and items (API version 40.0).
		{Method: "GET", Pattern: "/cloudapi/vcf/virtualDatacenters", handler: (*Server).tmListVDCs},
		{Method: "POST", Pattern: "/cloudapi/vcf/virtualDatacenters", handler: (*Server).tmCreateVDC},
		{Method: "GET", Pattern: "/cloudapi/vcf/virtualDatacenters/{vdcId}", handler: (*Server).tmGetVDC},
		{Method: "PUT", Pattern: "/cloudapi/vcf/virtualDatacenters/{vdcId}", handler: (*Server).tmUpdateVDC},
		{Method: "DELETE", Pattern: "/cloudapi/vcf/virtualDatacenters/{vdcId}", handler: (*Server).tmDeleteVDC},
		{Method: "GET", Pattern: "/cloudapi/vcf/contentLibraries", handler: (*Server).listContentLibraries},
		{Method: "POST", Pattern: "/cloudapi/vcf/contentLibraries", handler: (*Server).createContentLibrary},
		{Method: "GET", Pattern: "/cloudapi/vcf/contentLibraries/{catalogId}", handler: (*Server).getContentLibrary},
		{Method: "PUT", Pattern: "/cloudapi/vcf/contentLibraries/{catalogId}", handler: (*Server).updateContentLibrary},
		{Method: "DELETE", Pattern: "/cloudapi/vcf/contentLibraries/{catalogId}", handler: (*Server).deleteCatalog},
		{Method: "GET", Pattern: "/cloudapi/vcf/contentLibraryItems", handler: (*Server).listContentLibraryItems},
		{Method: "GET", Pattern: "/cloudapi/vcf/contentLibraryItems/{itemId}", handler: (*Server).getContentLibraryItem},

		{Method: "GET", Pattern: "/cloudapi/1.0.0/vapps", handler: (*Server).listVApps},
		{Method: "GET", Pattern: "/cloudapi/1.0.0/vapps/{vappId}", handler: (*Server).getVApp},
		{Method: "DELETE", Pattern: "/cloudapi/1.0.0/vapps/{vappId}", handler: (*Server).deleteVApp},
		{Method: "GET", Pattern: "/cloudapi/1.0.0/vapps/{vappId}/vms", handler: (*Server).listVAppVMs},

		{Method: "GET", Pattern: "/cloudapi/1.0.0/vms", handler: (*Server).listVMs},
		{Method: "GET", Pattern: "/cloudapi/1.0.0/vms/{vmId}", handler: (*Server).getVM},
		{Method: "POST", Pattern: "/cloudapi/1.0.0/vms/{vmId}/actions/powerOn", handler: (*Server).powerOn},
		{Method: "POST", Pattern: "/cloudapi/1.0.0/vms/{vmId}/actions/powerOff", handler: (*Server).powerOff},
		{Method: "POST", Pattern: "/cloudapi/1.0.0/vms/{vmId}/actions/reset", handler: (*Server).reset},
	}, infraRoutes()...)
}

// Handler is the API's http.Handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range Routes() {
		h := rt.handler
		var serve http.HandlerFunc
		if rt.public {
			serve = func(w http.ResponseWriter, r *http.Request) {
				if err := h(s, w, r); err != nil {
					s.fail(w, r, err, "")
				}
			}
		} else {
			serve = func(w http.ResponseWriter, r *http.Request) {
				p, err := s.authenticate(r)
				if err != nil {
					s.fail(w, r, err, "")
					return
				}
				if err := h(s, w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p))); err != nil {
					s.fail(w, r, err, "")
				}
			}
		}
		mux.HandleFunc(rt.Method+" "+rt.Pattern, serve)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if allow := allowed(mux, r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, r, &apiError{http.StatusMethodNotAllowed, CodeMethodNotAllow,
				r.Method + " is not served on " + r.URL.Path + "; it answers " + strings.Join(allow, ", ")})
			return
		}
		writeError(w, r, &apiError{http.StatusNotFound, CodeNotFound, "no such resource: " + r.URL.Path})
	})
	return headers(trimTrailingSlash(mux))
}

// allowed lists the methods mux serves on r's path. The catch-all "/" matches every method, so the mux never
// answers 405 by itself: a method missing on an existing path would read as a missing path.
func allowed(mux *http.ServeMux, r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
			out = append(out, m)
		}
	}
	return out
}

// trimTrailingSlash serves a path with a trailing "/" as the path without it: Cloud Director's Go SDK names its
// collections that way (".../orgs/").
func trimTrailingSlash(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
			r = r.Clone(r.Context())
			r.URL.Path = strings.TrimRight(p, "/")
			r.URL.RawPath = ""
		}
		next.ServeHTTP(w, r)
	})
}

// headers sets what every answer carries.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}
