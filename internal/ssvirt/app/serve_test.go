package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestServeFinishesRequestsBeforeClosing: a request in flight when the process is told to stop is answered, and the
// database is closed only after it, as a replica whose Pod is deleted must do for the calls it is serving.
func TestServeFinishesRequestsBeforeClosing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var answered, closedBeforeAnswer atomic.Bool
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(entered)
		<-release
		answered.Store(true)
		_, _ = io.WriteString(w, "created")
	})}
	ctx, cancel := context.WithCancel(context.Background())
	done := serve(ctx, srv, ln, 10*time.Second, func() error {
		closedBeforeAnswer.Store(!answered.Load())
		return nil
	})

	type result struct {
		status int
		body   string
		err    error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Post("http://"+ln.Addr().String()+"/vdcs", "application/json", nil)
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		got <- result{resp.StatusCode, string(body), err}
	}()
	<-entered
	cancel() // SIGTERM, while the request is being handled
	select {
	case err := <-done:
		t.Fatalf("serve ended (%v) with a request in flight", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if r := <-got; r.err != nil || r.status != http.StatusOK || r.body != "created" {
		t.Fatalf("the request in flight got %d %q, %v; want its answer", r.status, r.body, r.err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if closedBeforeAnswer.Load() {
		t.Fatal("the database was closed before the request in flight was answered")
	}
}

// TestServeEndsAtOnceWhenClosed: a server closed outright (the manager failed) does not wait for a shutdown that
// nobody asked for.
func TestServeEndsAtOnceWhenClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.NotFoundHandler()}
	done := serve(context.Background(), srv, ln, 10*time.Second, func() error { return nil })
	time.Sleep(50 * time.Millisecond)
	_ = srv.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not end after the server was closed")
	}
}
