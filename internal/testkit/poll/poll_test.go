package poll

import (
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
