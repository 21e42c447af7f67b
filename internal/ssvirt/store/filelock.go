package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// lockRetry is how often a process waiting for the database asks again.
const lockRetry = 200 * time.Millisecond

// lockFile holds <db>.lock exclusively for as long as the process has the database open. A replacement Pod can
// start while the one it replaces is still shutting down, on the same volume: it waits here until that process has
// closed the database (or died, which releases the lock), so SQLite is never open in two processes at once.
func lockFile(ctx context.Context, path string, waiting func()) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the database's lock file: %w", err)
	}
	told := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("locking %s.lock: %w", path, err)
		}
		if !told && waiting != nil {
			waiting()
			told = true
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for another process to close %s: %w", path, ctx.Err())
		case <-time.After(lockRetry):
		}
	}
}

// sqliteFile is the file a SQLite DSN names, or "" for an in-memory database.
func sqliteFile(dsn string) string {
	path, _, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	if path == ":memory:" || path == "" || strings.HasPrefix(dsn, "file::memory:") {
		return ""
	}
	return path
}

// unlock releases a lock from lockFile (closing the file releases the flock).
func unlock(f *os.File) {
	if f != nil {
		_ = f.Close()
	}
}
