package store

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// Query selects a window of a list, filtered and ordered. Columns in it come from the caller's fixed tables of
// fields, never from a request; values are always bound as parameters.
type Query struct {
	Page
	// Filter is a disjunction of conjunctions; empty is everything the scope may see. It only ever narrows the
	// scope: the scope's condition is ANDed with the whole filter.
	Filter [][]Cond
	// Order comes before the list's own order, which stays as the tie-breaker so that pages are stable.
	Order []Order
}

// Cond compares a column with a value: equal, or for Like a LIKE pattern with "\" as escape, compared
// case-insensitively; Negate turns either into "is not" (a NULL column is "not" anything).
type Cond struct {
	Column string
	Value  any
	Like   bool
	Negate bool
}

// LikeLiteral is a LIKE pattern that matches s and nothing else (compared case-insensitively).
func LikeLiteral(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// Order sorts by a column.
type Order struct {
	Column string
	Desc   bool
}

var columnPattern = regexp.MustCompile(`^([a-z]+\.)?[a-z_]+$`)

func checkColumn(c string) {
	if !columnPattern.MatchString(c) {
		panic(fmt.Sprintf("store: %q is not a column name", c)) // a programming error: columns are constants
	}
}

// where returns " AND (<filter>)" and its arguments.
func (q Query) where() (string, []any) {
	if len(q.Filter) == 0 {
		return "", nil
	}
	var ors []string
	var args []any
	for _, and := range q.Filter {
		var parts []string
		for _, c := range and {
			checkColumn(c.Column)
			cmp := c.Column + " = ?"
			if c.Like {
				cmp = "LOWER(" + c.Column + ") LIKE LOWER(?) ESCAPE '\\'"
			}
			if c.Negate {
				cmp = "(" + c.Column + " IS NULL OR NOT (" + cmp + "))"
			}
			parts = append(parts, cmp)
			args = append(args, c.Value)
		}
		ors = append(ors, "("+strings.Join(parts, " AND ")+")")
	}
	return " AND (" + strings.Join(ors, " OR ") + ")", args
}

// orderBy returns " ORDER BY" the query's order, then the list's own.
func (q Query) orderBy(own string) string {
	var parts []string
	for _, o := range q.Order {
		checkColumn(o.Column)
		dir := " ASC"
		if o.Desc {
			dir = " DESC"
		}
		parts = append(parts, o.Column+dir)
	}
	return " ORDER BY " + strings.Join(append(parts, own), ", ")
}

type scanner interface{ Scan(...any) error }

// list pages through "<selectFrom> WHERE 1 = 1 <cond> <q's filter>", counted by "<countFrom> ...", ordered by q's
// order and then own.
func list[T any](ctx context.Context, s *Store, selectFrom, countFrom, cond string, args []any, q Query, own string,
	scan func(scanner) (T, error)) ([]T, int, error) {
	filter, filterArgs := q.where()
	where := " WHERE 1 = 1" + cond + filter
	args = append(args, filterArgs...)
	var total int
	if err := s.queryRow(ctx, countFrom+where, args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	limit, offset := q.limitOffset()
	out, err := all(ctx, s, selectFrom+where+q.orderBy(own)+" LIMIT ? OFFSET ?", append(args, limit, offset), scan)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// all runs query (written with ? placeholders) and scans every row it returns.
func all[T any](ctx context.Context, s *Store, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, classify(rows.Err())
}
