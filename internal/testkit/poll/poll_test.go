package poll

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	Until(t, time.Second, "the third call", func() (bool, string, error) {
		calls++
		if calls < 3 {
			return false, "", errors.New("not yet")
		}
		return true, "", nil
	})
	if calls != 3 {
		t.Fatalf("cond called %d times, want 3", calls)
	}
}

// recorder is a testing.TB that records Fatalf instead of ending the test.
type recorder struct {
	testing.TB
	failed  bool
	message string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = true
	r.message = fmt.Sprintf(format, args...)
}

func TestUntilFailsWithWhatItSawLast(t *testing.T) {
	r := &recorder{TB: t}
	begin := time.Now()
	Until(r, 300*time.Millisecond, "never", func() (bool, string, error) { return false, "seen", errors.New("boom") })
	if !r.failed || !strings.Contains(r.message, "never") || !strings.Contains(r.message, "seen") || !strings.Contains(r.message, "boom") {
		t.Fatalf("failed=%t with %q; want a failure naming the wait, the last detail and the last error", r.failed, r.message)
	}
	if took := time.Since(begin); took < 300*time.Millisecond || took > 2*time.Second {
		t.Errorf("failed after %s, want about 300ms", took)
	}
}

func TestWaitReturnsNilOnceTheConditionHolds(t *testing.T) {
	calls := 0
	err := Wait(context.Background(), time.Second, "the third call", func() (bool, string, error) {
		calls++
		if calls < 3 {
			return false, "", errors.New("not yet")
		}
		return true, "", nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Wait returned %v after %d calls, want nil after 3", err, calls)
	}
}

func TestWaitFailsWithWhatItSawLast(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	begin := time.Now()
	err := Wait(context.Background(), 300*time.Millisecond, "never", func() (bool, string, error) {
		calls++
		return false, fmt.Sprintf("seen %d", calls), boom
	})
	took := time.Since(begin)
	want := fmt.Sprintf("never: not within 300ms (last seen: seen %d, error: boom)", calls)
	if err == nil || err.Error() != want {
		t.Fatalf("Wait returned %v, want %q", err, want)
	}
	if !errors.Is(err, boom) {
		t.Errorf("the error does not wrap the condition's last error: %v", err)
	}
	if took < 300*time.Millisecond || took > 2*time.Second {
		t.Errorf("failed after %s, want about 300ms", took)
	}
}

func TestUntilFailsWithWaitsMessage(t *testing.T) {
	cond := func() (bool, string, error) { return false, "seen", errors.New("boom") }
	r := &recorder{TB: t}
	Until(r, 50*time.Millisecond, "never", cond)
	err := Wait(context.Background(), 50*time.Millisecond, "never", cond)
	if !r.failed || err == nil || r.message != err.Error() {
		t.Fatalf("Until failed=%t with %q; Wait returned %v: want the same message", r.failed, r.message, err)
	}
}

func TestWaitEndsWhenTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	begin := time.Now()
	err := WaitEvery(ctx, time.Minute, 10*time.Millisecond, "never", func() (bool, string, error) {
		if calls++; calls == 3 {
			cancel()
		}
		return false, "seen", nil
	})
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("returned %s after the cancellation, want at once", took)
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "never") || !strings.Contains(err.Error(), "seen") {
		t.Fatalf("Wait returned %v, want context.Canceled naming the wait and what it saw last", err)
	}
	if calls != 3 {
		t.Errorf("cond called %d times, want 3 (none after the cancellation)", calls)
	}
}

func TestWaitEveryAsksAtItsInterval(t *testing.T) {
	calls := 0
	_ = WaitEvery(context.Background(), 200*time.Millisecond, 10*time.Millisecond, "never", func() (bool, string, error) {
		calls++
		return false, "", nil
	})
	// About 20 at 10 ms; Interval would give 2 or 3.
	if calls < 8 {
		t.Errorf("cond called %d times in 200ms at a 10ms interval", calls)
	}
}
