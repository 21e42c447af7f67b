package kube

import (
	"testing"
	"time"
)

// TestNamespaceLocksSerialiseOneNamespaceOnly: a second writer of the same namespace waits for the first; a writer of
// another namespace does not.
func TestNamespaceLocksSerialiseOneNamespaceOnly(t *testing.T) {
	var l namespaceLocks
	unlockA := l.lock("a")

	other := make(chan struct{})
	go func() { l.lock("b")(); close(other) }()
	select {
	case <-other:
	case <-time.After(5 * time.Second):
		t.Fatal("namespace b waited for namespace a's lock")
	}

	same := make(chan struct{})
	go func() { l.lock("a")(); close(same) }()
	select {
	case <-same:
		t.Fatal("a second writer of namespace a did not wait")
	case <-time.After(100 * time.Millisecond):
	}
	unlockA()
	select {
	case <-same:
	case <-time.After(5 * time.Second):
		t.Fatal("the second writer of namespace a never got the lock")
	}
}
