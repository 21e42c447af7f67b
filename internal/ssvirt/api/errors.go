package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Error is the body of every error answer, as Cloud Director's CloudAPI writes it.
type Error struct {
	MinorErrorCode string `json:"minorErrorCode"`
	Message        string `json:"message"`
}

// Minor error codes.
const (
	CodeBadRequest     = "BAD_REQUEST"
	CodeUnauthorized   = "UNAUTHORIZED"
	CodeForbidden      = "ACCESS_TO_RESOURCE_IS_FORBIDDEN"
	CodeNotFound       = "RESOURCE_NOT_FOUND"
	CodeConflict       = "DUPLICATE_NAME"
	CodeBusy           = "BUSY_ENTITY"
	CodeTooLarge       = "REQUEST_TOO_LARGE"
	CodeUnavailable    = "SERVICE_UNAVAILABLE"
	CodeInternal       = "INTERNAL_SERVER_ERROR"
	CodeMethodNotAllow = "METHOD_NOT_ALLOWED"
)

// apiError is an error with the answer it deserves.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(msg string) *apiError { return &apiError{http.StatusBadRequest, CodeBadRequest, msg} }
func notFound(what string) *apiError {
	return &apiError{http.StatusNotFound, CodeNotFound, what + " not found"}
}
func forbidden(msg string) *apiError { return &apiError{http.StatusForbidden, CodeForbidden, msg} }
func conflict(msg string) *apiError  { return &apiError{http.StatusConflict, CodeConflict, msg} }
func busy(msg string) *apiError      { return &apiError{http.StatusConflict, CodeBusy, msg} }
func unavailable(msg string) *apiError {
	return &apiError{http.StatusServiceUnavailable, CodeUnavailable, msg}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers err: an apiError as it says, a store error by kind, anything else as the database being
// unreachable when it is, an internal error (with the detail logged, not sent) when it is not.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error, what string) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
	case errors.Is(err, store.ErrNotFound):
		ae = notFound(what)
	case errors.Is(err, store.ErrConflict):
		ae = conflict(what + ": " + err.Error())
	case s.store.Ping(r.Context()) != nil:
		ae = unavailable("the database is unavailable; try again later")
	default:
		s.log.Error(err, "request failed", "method", r.Method, "path", r.URL.Path)
		ae = &apiError{http.StatusInternalServerError, CodeInternal, "internal error"}
	}
	writeJSON(w, ae.status, Error{MinorErrorCode: ae.code, Message: ae.msg})
}
