package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/pgserver"
)

// pg is one PostgreSQL server for the whole package; each test gets its own database on it.
var (
	pg      *pgserver.Server
	dbCount atomic.Int64
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	pg, err = pgserver.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := pg.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	return m.Run()
}

// eachDB runs f once on a fresh SQLite file and once on a fresh PostgreSQL database: the same repository
// behaviour is required of both.
func eachDB(t *testing.T, f func(t *testing.T, s *store.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		s, err := store.Open(t.Context(), store.DriverSQLite, filepath.Join(t.TempDir(), "ssvirt.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		f(t, s)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn, err := pg.CreateDatabase(t.Context(), fmt.Sprintf("test%d", dbCount.Add(1)))
		if err != nil {
			t.Fatal(err)
		}
		s, err := store.Open(t.Context(), store.DriverPostgres, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		f(t, s)
	})
}

func mustOrg(t *testing.T, s *store.Store, name string) store.Org {
	t.Helper()
	o, err := s.CreateOrg(t.Context(), store.Org{Name: name, DisplayName: strings.ToUpper(name), Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func fixedName(name string) func(string, int) string {
	return func(id string, attempt int) string {
		if attempt == 0 {
			return name
		}
		return fmt.Sprintf("%s-%s%d", name, id[:4], attempt)
	}
}

func mustVDC(t *testing.T, s *store.Store, org store.Org, name string) store.VDC {
	t.Helper()
	v, err := s.CreateVDC(t.Context(), store.VDC{OrgID: org.ID, Name: name, Enabled: true, CPUMillicores: 2000,
		MemoryMiB: 4096, StorageGiB: 10, State: store.StatePending}, fixedName("vdc-"+org.Name+"-"+name))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMigrationsApplyTwice(t *testing.T) {
	eachDB(t, func(t *testing.T, s *store.Store) {
		// Opening an up-to-date database again must be a no-op, not a failure: every process start does it.
		path := filepath.Join(t.TempDir(), "again.db")
		for range 2 {
			s2, err := store.Open(t.Context(), store.DriverSQLite, path)
			if err != nil {
				t.Fatal(err)
			}
			_ = s2.Close()
		}
		if err := s.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestOrganizations(t *testing.T) {
	eachDB(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := mustOrg(t, s, "acme")
		if _, err := s.CreateOrg(ctx, store.Org{Name: "acme", DisplayName: "again"}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate name: got %v, want ErrConflict", err)
		}
		a.Description, a.Enabled = "updated", false
		got, err := s.UpdateOrg(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if got.Description != "updated" || got.Enabled {
			t.Fatalf("update not stored: %+v", got)
		}
		mustOrg(t, s, "beta")
		orgs, total, err := s.ListOrgs(ctx, store.Scope{}, store.Query{Page: store.Page{Page: 2, PageSize: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if total != 2 || len(orgs) != 1 || orgs[0].Name != "beta" {
			t.Fatalf("page 2 of 1: total %d, %+v", total, orgs)
		}
		orgs, total, err = s.ListOrgs(ctx, store.Scope{OrgID: a.ID}, store.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if total != 1 || orgs[0].ID != a.ID {
			t.Fatalf("scoped list: total %d, %+v", total, orgs)
		}
		// An organization with a VDC keeps it: the VDC's namespace has to go first.
		mustVDC(t, s, a, "web")
		if err := s.DeleteOrg(ctx, a.ID); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("deleting an organization with a VDC: got %v, want ErrConflict", err)
		}
		if _, err := s.GetOrg(ctx, store.Scope{}, a.ID); err != nil {
			t.Fatalf("the organization is gone after a refused delete: %v", err)
		}
	})
}

func TestUsers(t *testing.T) {
	eachDB(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		org := mustOrg(t, s, "acme")
		if _, err := s.CreateUser(ctx, store.User{Username: "root", Role: store.RoleSystemAdmin, PasswordHash: "h", Enabled: true}); err != nil {
			t.Fatal(err)
		}
		// The schema itself refuses a system administrator in an organization, and a tenant user without one.
		if _, err := s.CreateUser(ctx, store.User{Username: "x", OrgID: org.ID, Role: store.RoleSystemAdmin, PasswordHash: "h"}); err == nil {
			t.Fatal("a system administrator inside an organization was stored")
		}
		if _, err := s.CreateUser(ctx, store.User{Username: "y", Role: store.RoleVAppUser, PasswordHash: "h"}); err == nil {
			t.Fatal("a vApp user without an organization was stored")
		}
		if _, err := s.CreateUser(ctx, store.User{Username: "bob", OrgID: org.ID, Role: store.RoleVAppUser, PasswordHash: "h"}); err != nil {
			t.Fatal(err)
		}
		u, err := s.UserByName(ctx, org.ID, "bob")
		if err != nil || u.OrgID != org.ID || u.Role != store.RoleVAppUser || u.OrgName != "acme" {
			t.Fatalf("UserByName: %+v, %v", u, err)
		}
		if _, err := s.UserByName(ctx, org.ID, "bob' OR '1'='1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a quoted name is data: got %v, want ErrNotFound", err)
		}
		// Names are unique per organization: another organization may have a bob, the same one may not, and
		// system administrators share one set of names.
		other := mustOrg(t, s, "other")
		if _, err := s.CreateUser(ctx, store.User{Username: "bob", OrgID: other.ID, Role: store.RoleOrgAdmin, PasswordHash: "h"}); err != nil {
			t.Fatalf("bob in another organization: %v", err)
		}
		if _, err := s.CreateUser(ctx, store.User{Username: "bob", OrgID: org.ID, Role: store.RoleOrgAdmin, PasswordHash: "h"}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a second bob in acme: got %v, want ErrConflict", err)
		}
		if _, err := s.CreateUser(ctx, store.User{Username: "root", Role: store.RoleSystemAdmin, PasswordHash: "h"}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a second system administrator root: got %v, want ErrConflict", err)
		}
		if bobs, err := s.UsersNamed(ctx, "bob"); err != nil || len(bobs) != 2 {
			t.Fatalf("UsersNamed(bob): %+v, %v", bobs, err)
		}
		if _, err := s.UserByName(ctx, "", "bob"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("bob among the system administrators: %v", err)
		}
		u.Role, u.Enabled = store.RoleOrgAdmin, false
		if err := s.UpdateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetUser(ctx, store.Scope{OrgID: org.ID}, u.ID); err != nil || got.Role != store.RoleOrgAdmin || got.Enabled {
			t.Fatalf("after update: %+v, %v", got, err)
		}
		if err := s.DeleteUser(ctx, store.Scope{OrgID: other.ID}, u.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleting acme's bob in other's scope: %v", err)
		}
		if err := s.DeleteUser(ctx, store.Scope{OrgID: org.ID}, u.ID); err != nil {
			t.Fatal(err)
		}
		n, err := s.CountSystemAdmins(ctx)
		if err != nil || n != 1 {
			t.Fatalf("CountSystemAdmins: %d, %v", n, err)
		}
	})
}

func TestTenantScopes(t *testing.T) {
	eachDB(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, b := mustOrg(t, s, "a"), mustOrg(t, s, "b")
		vb := mustVDC(t, s, b, "web")
		cb, err := s.CreateCatalog(ctx, store.Catalog{OrgID: b.ID, Name: "public"})
		if err != nil {
			t.Fatal(err)
		}
		ab, err := s.CreateVApp(ctx, store.VApp{OrgID: b.ID, VDCID: vb.ID, Name: "app", Namespace: vb.Namespace})
		if err != nil {
			t.Fatal(err)
		}
		scopeA := store.Scope{OrgID: a.ID}
		if _, err := s.GetVDC(ctx, scopeA, vb.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("org a reads org b's VDC: %v", err)
		}
		if _, err := s.GetCatalog(ctx, scopeA, cb.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("org a reads org b's catalog: %v", err)
		}
		if c, err := s.GetCatalog(ctx, store.Scope{OrgID: b.ID}, cb.ID); err != nil || c.OrgName != b.Name {
			t.Errorf("org b reads its catalog: %+v, %v", c, err)
		}
		if all, err := s.AllCatalogs(ctx, scopeA); err != nil || len(all) != 0 {
			t.Errorf("org a's catalogs: %+v, %v", all, err)
		}
		if _, err := s.GetVApp(ctx, scopeA, ab.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("org a reads org b's vApp: %v", err)
		}
		if _, err := s.GetOrg(ctx, scopeA, b.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("org a reads org b: %v", err)
		}
		if err := s.DeleteCatalog(ctx, scopeA, cb.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("org a deletes org b's catalog: %v", err)
		}
		if err := s.DeleteVApp(ctx, scopeA, ab.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("org a deletes org b's vApp: %v", err)
		}
		if err := s.MarkVDCDeleting(ctx, scopeA, vb.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("org a deletes org b's VDC: %v", err)
		}
		for name, n := range map[string]func() (int, error){
			"vdcs":     func() (int, error) { _, n, err := s.ListVDCs(ctx, scopeA, "", store.Query{}); return n, err },
			"catalogs": func() (int, error) { _, n, err := s.ListCatalogs(ctx, scopeA, store.Query{}); return n, err },
			"vapps":    func() (int, error) { _, n, err := s.ListVApps(ctx, scopeA, "", store.Query{}); return n, err },
		} {
			if got, err := n(); err != nil || got != 0 {
				t.Errorf("org a lists %d of org b's %s (%v)", got, name, err)
			}
		}
		// Everything is still there for its owner.
		if _, err := s.GetVApp(ctx, store.Scope{OrgID: b.ID}, ab.ID); err != nil {
			t.Errorf("org b lost its vApp: %v", err)
		}
	})
}

// A provider library is a catalog of no organization: every organization's scope passes it by, the unscoped one
// reads, lists, renames and deletes it, and its name is unique among provider libraries only.
func TestProviderLibraries(t *testing.T) {
	eachDB(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := mustOrg(t, s, "a")
		if _, err := s.CreateCatalog(ctx, store.Catalog{OrgID: a.ID, Name: "shared"}); err != nil {
			t.Fatal(err)
		}
		p, err := s.CreateProviderLibrary(ctx, "shared", "the provider's")
		if err != nil || !p.Provider() {
			t.Fatalf("created %+v, %v", p, err)
		}
		if _, err := s.CreateProviderLibrary(ctx, "shared", ""); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a second provider library of one name: %v", err)
		}
		scopeA := store.Scope{OrgID: a.ID}
		if _, err := s.GetCatalog(ctx, scopeA, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("org a reads the provider library: %v", err)
		}
		if _, n, err := s.ListCatalogs(ctx, scopeA, store.Query{}); err != nil || n != 1 {
			t.Errorf("org a's catalogs: %d, %v; want its own", n, err)
		}
		if _, n, err := s.ListCatalogs(ctx, store.Scope{}, store.Query{}); err != nil || n != 2 {
			t.Errorf("every catalog: %d, %v; want a's and the provider's", n, err)
		}
		if err := s.DeleteCatalog(ctx, scopeA, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("org a deletes the provider library: %v", err)
		}
		got, err := s.GetCatalog(ctx, store.Scope{}, p.ID)
		if err != nil || !got.Provider() || got.OrgName != "" || got.Description != "the provider's" {
			t.Fatalf("read back %+v, %v", got, err)
		}
		got.Name = "renamed"
		if got, err = s.UpdateCatalog(ctx, got); err != nil || got.Name != "renamed" || !got.Provider() {
			t.Errorf("renamed: %+v, %v", got, err)
		}
		if err := s.DeleteCatalog(ctx, store.Scope{}, p.ID); err != nil {
			t.Errorf("unscoped delete: %v", err)
		}
		if _, err := s.GetCatalog(ctx, store.Scope{}, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after delete: %v", err)
		}
	})
}

func TestVDCLifecycle(t *testing.T) {
	eachDB(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		org := mustOrg(t, s, "acme")
		v := mustVDC(t, s, org, "web")
		if v.Namespace != "vdc-acme-web" || v.OrgName != "acme" || v.State != store.StatePending {
			t.Fatalf("created: %+v", v)
		}
		if _, err := s.CreateVDC(ctx, store.VDC{OrgID: org.ID, Name: "web", State: store.StatePending}, fixedName("other")); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate VDC name in one organization: got %v, want ErrConflict", err)
		}
		// A second VDC whose namespace name collides gets the next candidate.
		w, err := s.CreateVDC(ctx, store.VDC{OrgID: org.ID, Name: "web2", State: store.StatePending}, fixedName("vdc-acme-web"))
		if err != nil {
			t.Fatal(err)
		}
		if w.Namespace == v.Namespace || !strings.HasPrefix(w.Namespace, "vdc-acme-web-") {
			t.Fatalf("colliding namespace: %q", w.Namespace)
		}

		v.CPUMillicores, v.Enabled, v.State = 4000, false, store.StatePending
		before, err := s.UpdateVDC(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if before.CPUMillicores != 2000 || !before.Enabled {
			t.Fatalf("UpdateVDC returns the old row: %+v", before)
		}
		if err := s.SetVDCState(ctx, v.ID, store.StateReady); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetVDC(ctx, store.Scope{OrgID: org.ID}, v.ID)
		if err != nil || got.CPUMillicores != 4000 || got.Enabled || got.State != store.StateReady {
			t.Fatalf("after update: %+v, %v", got, err)
		}

		// A VDC with a vApp is not deleted.
		app, err := s.CreateVApp(ctx, store.VApp{OrgID: org.ID, VDCID: v.ID, Name: "app", Namespace: v.Namespace})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.MarkVDCDeleting(ctx, store.Scope{}, v.ID); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("deleting a VDC with a vApp: got %v, want ErrConflict", err)
		}
		if err := s.DeleteVApp(ctx, store.Scope{}, app.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.MarkVDCDeleting(ctx, store.Scope{}, v.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetVDC(ctx, store.Scope{}, v.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a VDC being deleted is still served: %v", err)
		}
		// A late success must not resurrect it.
		if err := s.SetVDCState(ctx, v.ID, store.StateReady); err != nil {
			t.Fatal(err)
		}
		all, err := s.AllVDCs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		states := map[string]string{}
		for _, x := range all {
			states[x.ID] = x.State
		}
		if states[v.ID] != store.StateDeleting {
			t.Fatalf("state of the deleted VDC: %q", states[v.ID])
		}
		if err := s.DeleteVDCRow(ctx, v.ID); err != nil {
			t.Fatal(err)
		}

		// Rolling back leaves a tombstone that keeps the name from the next VDC.
		if err := s.RollbackVDC(ctx, w.ID); err != nil {
			t.Fatal(err)
		}
		ts, err := s.Tombstones(ctx)
		if err != nil || len(ts) != 1 || ts[0].Namespace != w.Namespace {
			t.Fatalf("tombstones: %+v, %v", ts, err)
		}
		x, err := s.CreateVDC(ctx, store.VDC{OrgID: org.ID, Name: "web3", State: store.StatePending}, fixedName(w.Namespace))
		if err != nil {
			t.Fatal(err)
		}
		if x.Namespace == w.Namespace {
			t.Fatalf("a tombstoned namespace name was handed out again: %q", x.Namespace)
		}
		if err := s.DeleteTombstone(ctx, w.Namespace); err != nil {
			t.Fatal(err)
		}
	})
}

func TestConcurrentCollidingVDCCreates(t *testing.T) {
	eachDB(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		org := mustOrg(t, s, "acme")
		const n = 200
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				// Every VDC asks for the same namespace first.
				_, errs[i] = s.CreateVDC(ctx, store.VDC{OrgID: org.ID, Name: fmt.Sprintf("vdc-%03d", i), State: store.StatePending},
					fixedName("vdc-acme-same"))
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("create %d: %v", i, err)
			}
		}
		all, err := s.AllVDCs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, v := range all {
			if seen[v.Namespace] {
				t.Fatalf("namespace %q handed out twice", v.Namespace)
			}
			seen[v.Namespace] = true
		}
		if len(all) != n {
			t.Fatalf("%d rows, want %d", len(all), n)
		}
	})
}

func TestRevokedSessions(t *testing.T) {
	eachDB(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		if err := s.RevokeSession(ctx, "old", time.Now().Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeSession(ctx, "live", time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		// Logging out twice is not an error.
		if err := s.RevokeSession(ctx, "live", time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.PruneRevokedSessions(ctx); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]bool{"old": false, "live": true, "never": false} {
			got, err := s.SessionRevoked(ctx, id)
			if err != nil || got != want {
				t.Errorf("SessionRevoked(%q) = %v, %v; want %v", id, got, err, want)
			}
		}
	})
}

// A new password hash moves the account's session epoch on; writing the same hash (a role or enabled change)
// leaves it, so that those changes do not end sessions the per-request checks keep valid.
func TestPasswordChangeMovesSessionEpoch(t *testing.T) {
	eachDB(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		org := mustOrg(t, s, "epochs")
		u, err := s.CreateUser(ctx, store.User{Username: "eve", OrgID: org.ID, Role: store.RoleVAppUser, PasswordHash: "h1", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		epoch := func() int64 {
			t.Helper()
			got, err := s.GetUser(ctx, store.Scope{}, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got.SessionEpoch
		}
		if got := epoch(); got != 0 {
			t.Fatalf("a new account's epoch: %d", got)
		}
		u.Role = store.RoleOrgAdmin
		if err := s.UpdateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if got := epoch(); got != 0 {
			t.Errorf("after a role change: epoch %d, want 0", got)
		}
		u.PasswordHash = "h2"
		if err := s.UpdateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		if got := epoch(); got != 1 {
			t.Errorf("after a password change: epoch %d, want 1", got)
		}
	})
}

func TestSQLiteOpenInOneProcessAtATime(t *testing.T) {
	// A replacement Pod starts while the old one still shuts down, on the same volume: it must wait for the old
	// process to close the database, and then see everything that process wrote.
	path := filepath.Join(t.TempDir(), "ssvirt.db")
	first, err := store.Open(t.Context(), store.DriverSQLite, path)
	if err != nil {
		t.Fatal(err)
	}
	org := mustOrg(t, first, "written-before-close")

	short, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if s, err := store.Open(short, store.DriverSQLite, path); err == nil {
		_ = s.Close()
		t.Fatal("a second process opened the database while the first had it open")
	} else if !strings.Contains(err.Error(), "waiting for another process to close") {
		t.Fatalf("second open: %v", err)
	}

	opened := make(chan *store.Store, 1)
	go func() {
		s, err := store.Open(t.Context(), store.DriverSQLite, path)
		if err != nil {
			t.Error(err)
		}
		opened <- s
	}()
	select {
	case <-opened:
		t.Fatal("the second open did not wait for the first to close")
	case <-time.After(300 * time.Millisecond):
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := <-opened
	if second == nil {
		return
	}
	defer second.Close()
	if _, err := second.OrgByName(t.Context(), org.Name); err != nil {
		t.Fatalf("the organization written before the first process closed: %v", err)
	}
}
