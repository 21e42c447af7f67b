package kube

import "sync"

// namespaceLocks serialises what is written to one VDC namespace. The API writes the database and then applies it;
// the reconciler reads the database and then applies it. Without a lock the reconciler can read a VDC just before the
// API's update commits and apply that older state just after the API applied the new one, undoing it until the next
// event. With the reconciler's read inside the lock, whichever applies last has read the database last. The lock is
// one process's: with several replicas (PostgreSQL), the reconciler runs in the leader only and another replica's API
// can still interleave with it. That still converges: an older state applied after the newer one changes the
// namespace, quota or policy, which is an event the reconciler takes, and it reads the database again.
type namespaceLocks struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// lock locks namespace ns and returns its unlock.
func (l *namespaceLocks) lock(ns string) func() {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*sync.Mutex{}
	}
	m := l.locks[ns]
	if m == nil {
		m = &sync.Mutex{}
		l.locks[ns] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}
