// Package vdc creates, changes and deletes VDCs: a database row and a namespace (with its quota and policy) that
// must end up agreeing. The order of the database and Kubernetes steps, what is undone when Kubernetes refuses,
// and what is left to the reconciler are decided here and nowhere else, so that every API shape of a VDC (CloudAPI
// 1.0.0, the Tenant Manager's) behaves the same. Who may ask, and what a request looks like, is the caller's
// business.
package vdc

import (
	"context"

	"github.com/go-logr/logr"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// Cluster is the Kubernetes side of a VDC; *kube.Cluster is the real one.
type Cluster interface {
	// Available says whether Kubernetes answered its last probe: when it did not, the reconciler does the
	// Kubernetes steps once it is back, and a request does not wait for it.
	Available() bool
	// ApplyVDC makes the VDC's namespace, quota and policy what v says; an error wrapping kube.ErrNamespaceTaken
	// means the name belongs to something else.
	ApplyVDC(ctx context.Context, v store.VDC) error
	// DeleteNamespace deletes the namespace of VDC vdcID and says whether it is gone.
	DeleteNamespace(ctx context.Context, name, vdcID string) (gone bool, err error)
	// Enqueue asks the reconciler to bring namespace name in line with the database.
	Enqueue(name string)
}

var _ Cluster = (*kube.Cluster)(nil)

// TaskStarter records a running task on behalf of whoever made the request ctx belongs to: who that is, the
// caller knows and the service does not need to.
type TaskStarter interface {
	StartTask(ctx context.Context, orgID, operation, ownerKind, ownerID, ownerName string) (store.Task, error)
}

// Settings are what a VDC's owner chooses and may change later. Limits of 0 are unlimited.
type Settings struct {
	Description                          string
	Enabled                              bool
	CPUMillicores, MemoryMiB, StorageGiB int64
}

// Spec is a new VDC: its name, which names its namespace and so never changes, and its settings.
type Spec struct {
	Name string
	Settings
}

// Service runs VDC creates, updates and deletes against the database and Kubernetes.
type Service struct {
	store   *store.Store
	cluster Cluster
	tasks   TaskStarter
	log     logr.Logger
}

// New returns the service.
func New(st *store.Store, cluster Cluster, tasks TaskStarter, log logr.Logger) *Service {
	return &Service{store: st, cluster: cluster, tasks: tasks, log: log}
}
