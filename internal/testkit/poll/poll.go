// Package poll is the test kit's one way to wait for a condition: tests wait through Until, the test kit's libraries,
// the benchmarks and the tools (which have no testing.TB) through Wait, so a wait reads, times out and reports the
// same everywhere. Both run the one loop in WaitEvery.
package poll

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Interval is how often Until and Wait ask again.
const Interval = 100 * time.Millisecond

// Until calls cond every Interval until it reports ok, and fails the test after timeout with what was seen last: the
// detail cond gave and its last error. An error does not end the wait (the object may not exist yet); it is reported
// if the wait fails.
func Until(t testing.TB, timeout time.Duration, what string, cond func() (ok bool, detail string, err error)) {
	t.Helper()
	// Not t.Context(): it is done before the test's clean-ups run, and those may wait too.
	if err := Wait(context.Background(), timeout, what, cond); err != nil {
		t.Fatalf("%v", err)
	}
}

// Wait is Until for code without a testing.TB: it calls cond every Interval until it reports ok and returns nil then;
// after timeout it returns an error saying what was seen last (the same message Until fails with), and once ctx is
// done an error saying so and what was seen last. The error wraps cond's last error (and ctx's), for [errors.Is].
func Wait(ctx context.Context, timeout time.Duration, what string, cond func() (ok bool, detail string, err error)) error {
	return WaitEvery(ctx, timeout, Interval, what, cond)
}

// WaitEvery is Wait asking every interval: for a caller that times what it waits for, or must see it sooner than
// Interval allows.
func WaitEvery(ctx context.Context, timeout, interval time.Duration, what string,
	cond func() (ok bool, detail string, err error)) error {
	deadline := time.Now().Add(timeout)
	timer := time.NewTimer(interval)
	defer timer.Stop()
	var detail string
	var err error
	for {
		var ok bool
		if ok, detail, err = cond(); ok {
			return nil
		}
		if time.Now().After(deadline) {
			return &waitError{what: what, timeout: timeout, detail: detail, last: err}
		}
		timer.Reset(interval)
		select {
		case <-ctx.Done():
			return &waitError{what: what, timeout: timeout, detail: detail, last: err, cause: ctx.Err()}
		case <-timer.C:
		}
	}
}

// waitError is a wait that ended without its condition: after its timeout, or (cause) once its context was done.
type waitError struct {
	what    string
	timeout time.Duration
	detail  string
	last    error
	cause   error
}

func (e *waitError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%s: %v before %s passed (last seen: %s, error: %v)", e.what, e.cause, e.timeout, e.detail, e.last)
	}
	return fmt.Sprintf("%s: not within %s (last seen: %s, error: %v)", e.what, e.timeout, e.detail, e.last)
}

func (e *waitError) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.cause, e.last} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
