// Package poll is the test kit's one way to wait for a condition: every end-to-end, node-tier and devcluster test
// polls through Until, so a wait reads, times out and reports the same everywhere.
package poll

import (
	"testing"
	"time"
)

// Interval is how often Until asks again.
const Interval = 100 * time.Millisecond

// Until calls cond every Interval until it reports ok, and fails the test after timeout with what was seen last: the
// detail cond gave and its last error. An error does not end the wait (the object may not exist yet); it is reported
// if the wait fails.
func Until(t testing.TB, timeout time.Duration, what string, cond func() (ok bool, detail string, err error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var detail string
	var err error
	for {
		var ok bool
		if ok, detail, err = cond(); ok {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(Interval)
	}
	t.Fatalf("%s: not within %s (last seen: %s, error: %v)", what, timeout, detail, err)
}
