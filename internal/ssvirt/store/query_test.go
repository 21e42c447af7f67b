package store_test

import (
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// TestQueryFilterAndOrder: filters narrow within the scope and never widen it; patterns are case-insensitive with
// "%" and "_" literal; a negation includes NULL columns; order and paging apply after the filter.
func TestQueryFilterAndOrder(t *testing.T) {
	eachDB(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := mustOrg(t, s, "alpha"), mustOrg(t, s, "beta")
		for _, n := range []string{"web", "Web_2", "db", "50%off"} {
			mustVDC(t, s, a, n)
		}
		mustVDC(t, s, b, "web")
		names := func(sc store.Scope, q store.Query) ([]string, int) {
			t.Helper()
			vdcs, total, err := s.ListVDCs(ctx, sc, "", q)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, v := range vdcs {
				out = append(out, v.Name)
			}
			return out, total
		}
		eq := func(v string) store.Cond { return store.Cond{Column: "v.name", Value: v} }
		like := func(v string) store.Cond { return store.Cond{Column: "v.name", Value: v, Like: true} }
		cases := []struct {
			name  string
			sc    store.Scope
			q     store.Query
			want  []string
			total int
		}{
			{"exact", store.Scope{}, store.Query{Filter: [][]store.Cond{{eq("web")}}}, []string{"web", "web"}, 2},
			{"exact in scope", store.Scope{OrgID: a.ID}, store.Query{Filter: [][]store.Cond{{eq("web")}}}, []string{"web"}, 1},
			// An OR of the other organization's id does not reach past the scope.
			{"or cannot widen", store.Scope{OrgID: a.ID}, store.Query{Filter: [][]store.Cond{{eq("nothing")}, {{Column: "v.org_id", Value: b.ID}}}}, nil, 0},
			{"pattern, any case", store.Scope{OrgID: a.ID}, store.Query{Filter: [][]store.Cond{{like("WEB%")}}}, []string{"Web_2", "web"}, 2},
			{"underscore literal", store.Scope{OrgID: a.ID}, store.Query{Filter: [][]store.Cond{{like(`%\_%`)}}}, []string{"Web_2"}, 1},
			{"percent literal", store.Scope{OrgID: a.ID}, store.Query{Filter: [][]store.Cond{{like(`%\%%`)}}}, []string{"50%off"}, 1},
			{"not", store.Scope{OrgID: a.ID}, store.Query{Filter: [][]store.Cond{{{Column: "v.name", Value: "web", Negate: true}}}}, []string{"50%off", "Web_2", "db"}, 3},
			{"and", store.Scope{OrgID: a.ID}, store.Query{Filter: [][]store.Cond{{like("%b%"), {Column: "v.name", Value: "db", Negate: true}}}}, []string{"Web_2", "web"}, 2},
			{"desc, paged", store.Scope{OrgID: a.ID}, store.Query{Page: store.Page{Page: 2, PageSize: 2}, Order: []store.Order{{Column: "v.name", Desc: true}}}, []string{"Web_2", "50%off"}, 4},
		}
		for _, c := range cases {
			got, total := names(c.sc, c.q)
			if total != c.total || len(got) != len(c.want) {
				t.Errorf("%s: %v (total %d), want %v (total %d)", c.name, got, total, c.want, c.total)
				continue
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("%s: %v, want %v", c.name, got, c.want)
					break
				}
			}
		}
	})
}
