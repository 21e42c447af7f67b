package vdc_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/vdc"
)

// fakeCluster is Kubernetes as the tests want it: down, refusing, or deleting slowly. It records what the
// service asked of it, in order.
type fakeCluster struct {
	down bool
	// apply answers ApplyVDC; nil takes everything.
	apply func(v store.VDC) error
	// deleteNS answers DeleteNamespace; nil says the namespace is gone.
	deleteNS func(name, vdcID string) (bool, error)

	applied  []store.VDC
	deleted  []string
	enqueued []string
}

func (c *fakeCluster) Available() bool { return !c.down }

func (c *fakeCluster) ApplyVDC(_ context.Context, v store.VDC) error {
	c.applied = append(c.applied, v)
	if c.apply == nil {
		return nil
	}
	return c.apply(v)
}

func (c *fakeCluster) DeleteNamespace(_ context.Context, name, vdcID string) (bool, error) {
	c.deleted = append(c.deleted, name)
	if c.deleteNS == nil {
		return true, nil
	}
	return c.deleteNS(name, vdcID)
}

func (c *fakeCluster) Enqueue(name string) { c.enqueued = append(c.enqueued, name) }

// tasks starts tasks as one user, and counts them.
type tasks struct {
	st      *store.Store
	started int
}

func (t *tasks) StartTask(ctx context.Context, orgID, operation, ownerKind, ownerID, ownerName string) (store.Task, error) {
	t.started++
	return t.st.CreateTask(ctx, store.Task{OrgID: orgID, Operation: operation, OwnerKind: ownerKind, OwnerID: ownerID,
		OwnerName: ownerName, UserID: "user-1", UserName: "admin", Message: operation + " " + ownerName})
}

type env struct {
	st      *store.Store
	cluster *fakeCluster
	tasks   *tasks
	svc     *vdc.Service
	org     store.Org
}

// newEnv is the service on a fresh SQLite database with organization "acme" in it.
func newEnv(t *testing.T) *env {
	t.Helper()
	st, err := store.Open(t.Context(), store.DriverSQLite, filepath.Join(t.TempDir(), "ssvirt.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	org, err := st.CreateOrg(t.Context(), store.Org{Name: "acme", DisplayName: "Acme", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{st: st, cluster: &fakeCluster{}, tasks: &tasks{st: st}, org: org}
	e.svc = vdc.New(st, e.cluster, e.tasks, logr.Discard())
	return e
}

func spec(name string) vdc.Spec {
	return vdc.Spec{Name: name, Settings: vdc.Settings{Description: "d", Enabled: true, CPUMillicores: 2000, MemoryMiB: 4096, StorageGiB: 10}}
}

// allVDCs is every row, also those being deleted.
func (e *env) allVDCs(t *testing.T) []store.VDC {
	t.Helper()
	vs, err := e.st.AllVDCs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func (e *env) tombstones(t *testing.T) []string {
	t.Helper()
	ts, err := e.st.Tombstones(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tomb := range ts {
		out = append(out, tomb.Namespace)
	}
	return out
}

// wantKind fails unless err is a *vdc.Error of kind with message msg.
func wantKind(t *testing.T, err, kind error, msg string) {
	t.Helper()
	var e *vdc.Error
	if !errors.As(err, &e) || !errors.Is(err, kind) {
		t.Fatalf("error %v (%T), want a vdc.Error of kind %v", err, err, kind)
	}
	if e.Msg != msg {
		t.Fatalf("message %q, want %q", e.Msg, msg)
	}
}
