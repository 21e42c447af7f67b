package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
)

// kyvernoComponents are Kyverno's controllers. Each exits when it cannot renew its leader lease in time, which a
// machine saturated by the scale runs can cause (its own client rate limiter holds the renewal back). In a cluster
// the kubelet restarts the pod; supervisor does the same here and counts it, so that a run is not lost to it and the
// restart shows in the results.
var kyvernoComponents = []string{devcluster.ComponentKyverno, devcluster.ComponentKyvernoBackground}

type supervisor struct {
	cluster *devcluster.Cluster
	mu      sync.Mutex // held while the benchmark stops and starts Kyverno itself
	// restarts counts the restarts per component since the last take.
	restarts map[string]int
}

func newSupervisor(ctx context.Context, cluster *devcluster.Cluster) *supervisor {
	s := &supervisor{cluster: cluster, restarts: map[string]int{}}
	go func() {
		for ctx.Err() == nil {
			time.Sleep(2 * time.Second)
			s.restartExited(ctx)
		}
	}()
	return s
}

func (s *supervisor) restartExited(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The bench stops supervising before it stops the cluster; a check that woke after that would find every
	// controller stopped and try to start each again.
	if ctx.Err() != nil {
		return
	}
	for _, c := range kyvernoComponents {
		if s.cluster.PID(c) != 0 {
			continue
		}
		fmt.Printf("[supervisor] %s exited (see its log); restarting it, as the kubelet would\n", c)
		if err := s.cluster.StartComponent(ctx, c); err != nil {
			fmt.Printf("[supervisor] restarting %s: %v\n", c, err)
			continue
		}
		s.restarts[c]++
	}
}

// restart stops and starts Kyverno's controllers on purpose (fresh caches and memory peaks between measurements).
func (s *supervisor) restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range kyvernoComponents {
		if err := s.cluster.StopComponent(c); err != nil {
			return fmt.Errorf("stopping %s: %w", c, err)
		}
		if err := s.cluster.StartComponent(ctx, c); err != nil {
			return fmt.Errorf("restarting %s: %w", c, err)
		}
	}
	return nil
}

// take returns the restarts counted since the last call, by component, and starts counting afresh.
func (s *supervisor) take() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.restarts
	s.restarts = map[string]int{}
	return out
}

// kyvernoArgs lengthen Kyverno's leader election (default retry period 2 s: renew deadline 10 s, lease 12 s). Under
// the scale run's burst the lease renewal waits behind the controller's own requests in its client rate limiter
// (100 QPS), misses the deadline, and the controller exits, losing the UpdateRequests it had not written yet. The
// rate limits, workers and thresholds that the figures measure stay Kyverno's defaults.
var kyvernoArgs = []string{"--leaderElectionRetryPeriod=10s"}
