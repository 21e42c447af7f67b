package controller

import (
	"errors"
	"sync"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/config"
)

// Store holds the configuration in force and whether the ConfigMap, as last read, was valid. An invalid or missing
// ConfigMap never replaces a good configuration: it only makes the operator report itself not ready.
type Store struct {
	mu       sync.RWMutex
	current  *config.Config
	problem  error
	watchers []chan struct{}
}

// NewStore returns an empty store: nothing is reconciled until a valid configuration arrives.
func NewStore() *Store { return &Store{problem: errors.New("configuration not loaded yet")} }

// Current is the configuration in force, nil before the first valid one.
func (s *Store) Current() *config.Config {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.current
}

// Problem is why the ConfigMap as last read is not in force, nil if it is.
func (s *Store) Problem() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.problem
}

// Set puts cfg in force and reports whether it differs from the configuration before; watchers hear of changes only.
func (s *Store) Set(cfg *config.Config) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problem = nil
	if s.current.Equal(cfg) {
		return false
	}
	s.current = cfg
	for _, w := range s.watchers {
		select {
		case w <- struct{}{}:
		default: // a change is already pending; the watcher reads Current anyway
		}
	}
	return true
}

// Reject records that the ConfigMap could not be used; the configuration in force stays.
func (s *Store) Reject(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problem = err
}

// Watch returns a channel that receives a value after each change of the configuration in force (coalesced), and one
// right away if there is already a configuration.
func (s *Store) Watch() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{}, 1)
	if s.current != nil {
		ch <- struct{}{}
	}
	s.watchers = append(s.watchers, ch)
	return ch
}
