package app

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// shutdownTimeout bounds how long requests in flight may take to finish once the process is told to stop. The chart's
// terminationGracePeriodSeconds (30) covers it and the pre-stop pause.
const shutdownTimeout = 10 * time.Second

// serve runs srv on ln until ctx ends, then shuts it down gracefully: it stops accepting, lets the requests in flight
// finish (for at most timeout), and only then runs closing (the manager's end, the database) and sends the result on
// the channel it returns. Serve itself returns at the start of a shutdown: closing the database then would fail, or
// cut off, every request still being answered. A server closed outright (srv.Close) ends at once.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, timeout time.Duration, closing func() error) <-chan error {
	done := make(chan error, 1)
	drained := make(chan struct{})
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_ = srv.Shutdown(shutdown)
		close(drained)
	}()
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
			if ctx.Err() != nil {
				<-drained
			}
		}
		done <- errors.Join(err, closing())
	}()
	return done
}
