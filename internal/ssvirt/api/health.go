package api

import (
	"context"
	_ "embed" // the OpenAPI document
	"net/http"
	"sort"
	"time"
)

//go:embed openapi.yaml
var openapiDoc []byte

// OpenAPI is the checked-in OpenAPI document of what Handler serves.
func OpenAPI() []byte { return openapiDoc }

func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	_, err := w.Write(openapiDoc)
	return err
}

// healthz says the process serves HTTP; it does not depend on the database or Kubernetes, so that neither
// gets the process restarted.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// Check is one dependency's state.
type Check struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// Readiness is the answer of /readyz.
type Readiness struct {
	Status     string `json:"status"`
	Database   Check  `json:"database"`
	Kubernetes Check  `json:"kubernetes"`
	// OrphanNamespaces are labelled as ssvirt's but owned by no VDC: left alone, reported for an operator.
	OrphanNamespaces []string `json:"orphanNamespaces,omitempty"`
}

// readyz reports the database and Kubernetes separately. Without the database nothing works: 503, "down".
// Without Kubernetes the API still serves (VDC changes are kept and reconciled later, the catalog answers from
// the cache): 200, "degraded".
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	out := Readiness{Status: "ok", Database: Check{Status: "ok"}, Kubernetes: Check{Status: "ok"}}
	if !s.cluster.Available() {
		out.Status = "degraded"
		out.Kubernetes = Check{Status: "unavailable", Message: s.cluster.Status()}
	}
	out.OrphanNamespaces = s.cluster.Orphans()
	sort.Strings(out.OrphanNamespaces)
	status := http.StatusOK
	if err := s.store.Ping(ctx); err != nil {
		out.Status = "down"
		out.Database = Check{Status: "unavailable", Message: err.Error()}
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, out)
	return nil
}
