package main

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// The GitOps floor and the engines' GitOps apply share applyPairs, so that their bursts are the same: Service first,
// source first, and the Service 50 ms before the source, in turn; a failed apply is returned.
func TestApplyPairsAppliesInTheThreeOrders(t *testing.T) {
	var mu sync.Mutex
	applied := map[int][]string{}
	at := map[int][]time.Time{}
	record := func(what string) func(int) error {
		return func(i int) error {
			mu.Lock()
			defer mu.Unlock()
			applied[i], at[i] = append(applied[i], what), append(at[i], time.Now())
			return nil
		}
	}
	starts, err := applyPairs(6, record("service"), record("source"))
	if err != nil || len(starts) != 6 {
		t.Fatalf("applyPairs = %d starts, %v", len(starts), err)
	}
	for i := range 6 {
		want := []string{"service", "source"}
		if i%3 == 1 {
			want = []string{"source", "service"}
		}
		if len(applied[i]) != 2 || applied[i][0] != want[0] || applied[i][1] != want[1] {
			t.Errorf("pair %d applied %v, want %v", i, applied[i], want)
		}
		if gap := at[i][1].Sub(at[i][0]); i%3 == 2 && gap < 50*time.Millisecond {
			t.Errorf("pair %d: source %s after its Service, want at least 50 ms", i, gap)
		}
		if starts[i].After(at[i][0]) {
			t.Errorf("pair %d timed from after its first apply", i)
		}
	}
	failed := errors.New("refused")
	if _, err := applyPairs(3, record("service"), func(int) error { return failed }); !errors.Is(err, failed) {
		t.Errorf("applyPairs with a failing apply = %v, want %v", err, failed)
	}
}

func TestSinceStartsCountsThoseLaterThan5s(t *testing.T) {
	t0 := time.Now()
	starts := []time.Time{t0, t0, t0}
	done := []time.Duration{time.Second, gitopsUnresolvedAfter, gitopsUnresolvedAfter + time.Millisecond}
	samples, late := sinceStarts(starts, func(i int) time.Time { return t0.Add(done[i]) })
	if late != 1 || len(samples) != 3 || samples[2] != done[2] {
		t.Errorf("sinceStarts = %v, %d late; want %v, 1 late", samples, late, done)
	}
}

// The ratio is only given when both the engine's and the floor's measurements are complete.
func TestGitOpsFloorRatio(t *testing.T) {
	floor := &gitopsFloorResult{ApplyToIngress: &latency{P95: 2000}}
	if got := floor.p95Ratio(&latency{P95: 14000}); got != 7 {
		t.Errorf("ratio = %v, want 7", got)
	}
	for name, c := range map[string]struct {
		floor  *gitopsFloorResult
		engine *latency
	}{
		"no floor":      {nil, &latency{P95: 14000}},
		"failed floor":  {&gitopsFloorResult{ApplyToIngress: &latency{P95: 2000, Error: "x"}}, &latency{P95: 14000}},
		"no engine":     {floor, nil},
		"failed engine": {floor, &latency{P95: 14000, Error: "x"}},
	} {
		if got := c.floor.p95Ratio(c.engine); got != 0 {
			t.Errorf("%s: ratio = %v, want 0", name, got)
		}
	}
}
