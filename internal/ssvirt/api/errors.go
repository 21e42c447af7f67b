package api

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"net/http"
	"strings"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Error is the body of every error answer on /cloudapi (and on /api when JSON is asked for), as Cloud
// Director's CloudAPI writes it.
type Error struct {
	MinorErrorCode string `json:"minorErrorCode"`
	Message        string `json:"message"`
}

// XMLError is the body of error answers on /api: Cloud Director's XML Error, which its clients parse there.
type XMLError struct {
	XMLName        xml.Name `xml:"http://www.vmware.com/vcloud/v1.5 Error" json:"-"`
	MajorErrorCode int      `xml:"majorErrorCode,attr" json:"majorErrorCode"`
	MinorErrorCode string   `xml:"minorErrorCode,attr" json:"minorErrorCode"`
	Message        string   `xml:"message,attr" json:"message"`
}

// Minor error codes.
const (
	CodeBadRequest       = "BAD_REQUEST"
	CodeUnauthorized     = "UNAUTHORIZED"
	CodeForbidden        = "ACCESS_TO_RESOURCE_IS_FORBIDDEN"
	CodeNotFound         = "RESOURCE_NOT_FOUND"
	CodeConflict         = "DUPLICATE_NAME"
	CodeBusy             = "BUSY_ENTITY"
	CodeTooLarge         = "REQUEST_TOO_LARGE"
	CodeUnavailable      = "SERVICE_UNAVAILABLE"
	CodeInternal         = "INTERNAL_SERVER_ERROR"
	CodeMethodNotAllow   = "METHOD_NOT_ALLOWED"
	CodeUnsupportedMedia = "UNSUPPORTED_MEDIA_TYPE"
)

// apiError is an error with the answer it deserves.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(msg string) *apiError { return &apiError{http.StatusBadRequest, CodeBadRequest, msg} }

// noAccess answers an id that does not exist and an id the caller may not see alike, with Cloud Director's 403:
// its clients take that answer as "not found", and the two must not be told apart, or existence leaks.
func noAccess(what string) *apiError {
	return &apiError{http.StatusForbidden, CodeForbidden, what + " does not exist or is not accessible to you"}
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

func writeXML(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/*+xml;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(xml.Header))
	_ = xml.NewEncoder(w).Encode(v)
}

// wantsXML: the XML /api answers in XML unless the client asks for JSON, as Cloud Director does.
func wantsXML(r *http.Request) bool {
	return (r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/")) && !strings.Contains(r.Header.Get("Accept"), "json")
}

// writeError answers status with an error body in the shape the path's API uses.
func writeError(w http.ResponseWriter, r *http.Request, e *apiError) {
	if wantsXML(r) {
		writeXML(w, e.status, XMLError{MajorErrorCode: e.status, MinorErrorCode: e.code, Message: e.msg})
		return
	}
	writeJSON(w, e.status, Error{MinorErrorCode: e.code, Message: e.msg})
}

// fail answers err: an apiError as it says, a store error by kind, anything else as the database being
// unreachable when it is, an internal error (with the detail logged, not sent) when it is not.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error, what string) {
	if what == "" {
		what = "the entity"
	}
	var ae *apiError
	switch {
	case errors.As(err, &ae):
	case errors.Is(err, store.ErrNotFound):
		ae = noAccess(what)
	case errors.Is(err, store.ErrConflict):
		ae = conflict(what + ": " + err.Error())
	case s.store.Ping(r.Context()) != nil:
		ae = unavailable("the database is unavailable; try again later")
	default:
		s.log.Error(err, "request failed", "method", r.Method, "path", r.URL.Path)
		ae = &apiError{http.StatusInternalServerError, CodeInternal, "internal error"}
	}
	writeError(w, r, ae)
}
