package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/fiql"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

type fieldKind int

const (
	textField fieldKind = iota
	boolField
	urnField
)

// field is a property of a listed entity that filter, sortAsc and sortDesc may name: the store column it is (empty
// for lists that are not rows), what its values are, and for URNs their kind.
type field struct {
	column  string
	kind    fieldKind
	urnKind string
}

func text(column string) field      { return field{column: column} }
func boolean(column string) field   { return field{column: column, kind: boolField} }
func urn(column, kind string) field { return field{column: column, kind: urnField, urnKind: kind} }
func (f field) value(v string) (any, error) {
	switch f.kind {
	case boolField:
		b, err := strconv.ParseBool(v)
		if err != nil || (v != "true" && v != "false") {
			return nil, fmt.Errorf("want true or false, got %q", v)
		}
		return b, nil
	case urnField:
		id, ok := naming.ParseURN(f.urnKind, v)
		if !ok {
			return nil, fmt.Errorf("%q is not a %s URN", v, f.urnKind)
		}
		return id, nil
	}
	return v, nil
}

// fields are a list's filterable and sortable properties, by their API names.
type fields map[string]field

func (fs fields) lookup(param, name string) (field, error) {
	f, ok := fs[name]
	if !ok {
		names := make([]string, 0, len(fs))
		for n := range fs {
			names = append(names, n)
		}
		slices.Sort(names)
		return field{}, badRequest(fmt.Sprintf("%s: %q is not one of %s", param, name, strings.Join(names, ", ")))
	}
	return f, nil
}

// listRequest is a list call's page, filter and order, checked against the list's fields: a filter the server
// cannot evaluate is refused, never ignored.
type listRequest struct {
	page   store.Page
	filter fiql.Filter
	sortBy string
	desc   bool
	fields fields
}

func parseList(r *http.Request, fs fields) (listRequest, error) {
	p, err := pageOf(r)
	if err != nil {
		return listRequest{}, err
	}
	lr := listRequest{page: p, fields: fs}
	q := r.URL.Query()
	if lr.filter, err = fiql.Parse(q.Get("filter")); err != nil {
		return listRequest{}, badRequest(err.Error())
	}
	for _, and := range lr.filter {
		for _, c := range and {
			f, err := fs.lookup("filter", c.Selector)
			if err != nil {
				return listRequest{}, err
			}
			if c.Wildcard() && f.kind != textField {
				return listRequest{}, badRequest(fmt.Sprintf("filter: %s takes no wildcard", c.Selector))
			}
			if !c.Wildcard() {
				if _, err := f.value(c.Value); err != nil {
					return listRequest{}, badRequest(fmt.Sprintf("filter: %s: %s", c.Selector, err))
				}
			}
		}
	}
	asc, desc := q.Get("sortAsc"), q.Get("sortDesc")
	switch {
	case asc != "" && desc != "":
		return listRequest{}, badRequest("sortAsc and sortDesc: one or the other")
	case asc != "":
		lr.sortBy = asc
	case desc != "":
		lr.sortBy, lr.desc = desc, true
	}
	if lr.sortBy != "" {
		if _, err := fs.lookup("sort", lr.sortBy); err != nil {
			return listRequest{}, err
		}
	}
	return lr, nil
}

// query is the request for the store: every column comes from the list's fields, every value is a parameter.
func (lr listRequest) query() store.Query {
	q := store.Query{Page: lr.page}
	for _, and := range lr.filter {
		var conds []store.Cond
		for _, c := range and {
			f := lr.fields[c.Selector]
			cond := store.Cond{Column: f.column, Negate: c.Op == fiql.Ne}
			if c.Wildcard() {
				cond.Like, cond.Value = true, likePattern(c.Value)
			} else {
				cond.Value, _ = f.value(c.Value) // checked in parseList
			}
			conds = append(conds, cond)
		}
		q.Filter = append(q.Filter, conds)
	}
	if lr.sortBy != "" {
		q.Order = []store.Order{{Column: lr.fields[lr.sortBy].column, Desc: lr.desc}}
	}
	return q
}

// window filters, orders and pages a list that is not rows (catalog items, roles); value gives an item's
// property as text (URNs as URNs, booleans as true or false).
func window[T any](lr listRequest, items []T, value func(T, string) string) ([]T, int) {
	var kept []T
	for _, it := range items {
		if lr.filter.Eval(func(sel string) string { return value(it, sel) }) {
			kept = append(kept, it)
		}
	}
	if lr.sortBy != "" {
		slices.SortStableFunc(kept, func(a, b T) int {
			c := strings.Compare(value(a, lr.sortBy), value(b, lr.sortBy))
			if lr.desc {
				return -c
			}
			return c
		})
	}
	start := min((lr.page.Page-1)*lr.page.PageSize, len(kept))
	end := min(start+lr.page.PageSize, len(kept))
	return kept[start:end], len(kept)
}

// writeList answers a page of a list of rows: list runs the checked query, out shapes each row (one store list
// serves more than one API shape).
func writeList[R, T any](w http.ResponseWriter, r *http.Request, fs fields, list func(store.Query) ([]R, int, error),
	out func(R) T) error {
	lr, err := parseList(r, fs)
	if err != nil {
		return err
	}
	rows, total, err := list(lr.query())
	if err != nil {
		return err
	}
	values := make([]T, len(rows))
	for i, row := range rows {
		values[i] = out(row)
	}
	writePage(w, r, lr.page, total, values)
	return nil
}

// writeWindow answers a page of a list that is not rows (see window): items makes it once the request's paging,
// filter and order are known to be valid.
func writeWindow[T any](w http.ResponseWriter, r *http.Request, fs fields, items func() ([]T, error),
	value func(T, string) string) error {
	lr, err := parseList(r, fs)
	if err != nil {
		return err
	}
	all, err := items()
	if err != nil {
		return err
	}
	out, total := window(lr, all, value)
	writePage(w, r, lr.page, total, out)
	return nil
}

// writeOne answers an entity with status, or the error that reading or making it gave.
func writeOne(w http.ResponseWriter, status int, v any, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, status, v)
	return nil
}

// writePage answers a page of a list with Cloud Director's paging Link headers, which its clients follow.
func writePage[T any](w http.ResponseWriter, r *http.Request, p store.Page, total int, values []T) {
	out := paged(p, total, values)
	link := func(page int, rel string) {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(page))
		q.Set("pageSize", strconv.Itoa(p.PageSize))
		u := url.URL{Scheme: scheme(r), Host: r.Host, Path: r.URL.Path, RawQuery: q.Encode()}
		w.Header().Add("Link", fmt.Sprintf(`<%s>;rel="%s";type="application/json"`, u.String(), rel))
	}
	if out.PageCount > 0 {
		link(1, "firstPage")
		link(out.PageCount, "lastPage")
	}
	if p.Page < out.PageCount {
		link(p.Page+1, "nextPage")
	}
	if p.Page > 1 && p.Page <= out.PageCount {
		link(p.Page-1, "previousPage")
	}
	writeJSON(w, http.StatusOK, out)
}

// scheme is how the client reached the server: TLS, or what a proxy in front says (only http or https).
func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		return p
	}
	return "http"
}

// likePattern turns a wildcard value into a LIKE pattern: "*" is any run, everything else is literal.
func likePattern(value string) string {
	parts := strings.Split(value, "*")
	for i, p := range parts {
		parts[i] = store.LikeLiteral(p)
	}
	return strings.Join(parts, "%")
}
