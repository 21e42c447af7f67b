package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// ownWrites remembers, per production Service, the VirtualService as the API server returned it from the operator's
// last write, until the cache has caught up with that write. A reconcile that runs before the watch delivered the
// write would otherwise see the version before it: it would find a difference that is already written, and send the
// old resourceVersion, to be answered 409 Conflict and retried a second later. With no other writer, that is the only
// way the operator's writes conflict: no two reconciles of one Service run at once.
type ownWrites struct {
	mu sync.Mutex
	m  map[types.NamespacedName]ownWrite
}

type ownWrite struct {
	// base is the resourceVersion the write replaced.
	base    string
	written *unstructured.Unstructured
}

func newOwnWrites() *ownWrites { return &ownWrites{m: map[types.NamespacedName]ownWrite{}} }

// record keeps written, which replaced the version base of the VirtualService of service. A create (base "") is not
// recorded: a VirtualService the cache lacks is read from the API server anyway, which also sees a deletion.
func (w *ownWrites) record(service types.NamespacedName, base string, written *unstructured.Unstructured) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if base == "" || written.GetResourceVersion() == base {
		delete(w.m, service)
		return
	}
	written = written.DeepCopy()
	written.SetManagedFields(nil) // as the cache strips them: only memory
	w.m[service] = ownWrite{base: base, written: written}
}

// latest returns what the VirtualService of service is, given the cached one: the operator's own last write while the
// cache still shows the version that write replaced, the cached object otherwise. In the second case the record has
// served: the cache has caught up, or another writer (or a deletion) came after, which the cache shows better.
func (w *ownWrites) latest(service types.NamespacedName, cached *unstructured.Unstructured) *unstructured.Unstructured {
	w.mu.Lock()
	defer w.mu.Unlock()
	rec, ok := w.m[service]
	if !ok {
		return cached
	}
	if cached != nil && cached.GetName() == rec.written.GetName() && cached.GetResourceVersion() == rec.base {
		return rec.written.DeepCopy()
	}
	delete(w.m, service)
	return cached
}

// forget drops the record of service, whose Service is gone.
func (w *ownWrites) forget(service types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, service)
}
