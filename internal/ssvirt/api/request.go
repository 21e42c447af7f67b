package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// MaxBodyBytes bounds request bodies; larger ones are refused before they are read.
const MaxBodyBytes = 64 << 10

// decode reads exactly one JSON object into v, refusing a body not declared as JSON (415, as Cloud Director
// answers), unknown fields, wrong types, trailing data and bodies over MaxBodyBytes, with a message that names
// the problem. Every handler that reads a body reads it here, so that no endpoint takes a form or XML for JSON.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	if err := jsonContentType(r); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		switch {
		case errors.As(err, &tooLarge):
			return &apiError{http.StatusRequestEntityTooLarge, CodeTooLarge, fmt.Sprintf("the request body is larger than %d bytes", MaxBodyBytes)}
		case errors.As(err, &typeErr):
			return badRequest(fmt.Sprintf("field %q: want %s, got %s", typeErr.Field, typeErr.Type, typeErr.Value))
		case errors.As(err, &syntaxErr):
			return badRequest(fmt.Sprintf("the body is not valid JSON (at byte %d)", syntaxErr.Offset))
		case errors.Is(err, io.EOF):
			return badRequest("the request needs a JSON body")
		default:
			return badRequest("the body is not acceptable: " + err.Error())
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("the body holds more than one JSON value")
	}
	return nil
}

// jsonContentType accepts application/json and the structured-syntax types application/*+json, with any
// parameters (Cloud Director's clients send "application/json;version=40.0"); anything else, or no type at all,
// is 415 Unsupported Media Type.
func jsonContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil
	}
	if ct == "" {
		ct = "none"
	}
	return &apiError{http.StatusUnsupportedMediaType, CodeUnsupportedMedia,
		fmt.Sprintf("Content-Type %s: the body must be JSON (Content-Type: application/json)", ct)}
}

// MaxPageSize bounds pageSize.
const MaxPageSize = 128

func pageOf(r *http.Request) (store.Page, error) {
	p := store.Page{Page: 1, PageSize: 25}
	for name, dst := range map[string]*int{"page": &p.Page, "pageSize": &p.PageSize} {
		raw := r.URL.Query().Get(name)
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return p, badRequest(fmt.Sprintf("%s=%q: want a whole number from 1", name, raw))
		}
		*dst = n
	}
	if p.PageSize > MaxPageSize {
		return p, badRequest(fmt.Sprintf("pageSize=%d: at most %d", p.PageSize, MaxPageSize))
	}
	return p, nil
}

// Paged is a page of a list.
type Paged[T any] struct {
	ResultTotal int `json:"resultTotal"`
	PageCount   int `json:"pageCount"`
	Page        int `json:"page"`
	PageSize    int `json:"pageSize"`
	Values      []T `json:"values"`
}

func paged[T any](p store.Page, total int, values []T) Paged[T] {
	if values == nil {
		values = []T{}
	}
	return Paged[T]{ResultTotal: total, PageCount: (total + p.PageSize - 1) / p.PageSize, Page: p.Page, PageSize: p.PageSize, Values: values}
}

// idOf reads path parameter name as a URN of kind; anything else is not found (a malformed id names nothing).
func idOf(r *http.Request, name, kind, what string) (string, error) {
	id, ok := naming.ParseURN(kind, r.PathValue(name))
	if !ok {
		return "", noAccess(what)
	}
	return id, nil
}

// Ref is a reference to another entity.
type Ref struct {
	Name string `json:"name,omitempty"`
	ID   string `json:"id"`
}
