package main

import (
	"context"
	"sync"
	"time"

	"github.com/virtual-ingress/virtual-ingress/tests/virtualingress/traffic"
)

// sample is one request of the load.
type sample struct {
	at      time.Time
	backend string // "" when the request failed (an error, or an answer no echo Pod gave)
}

// load sends GET requests for host at a fixed rate through client until stopped, and keeps every outcome.
type load struct {
	mu      sync.Mutex
	samples []sample
	stop    context.CancelFunc
	done    chan struct{}
}

// startLoad sends rate requests a second, each bounded by the client's timeout, at most limit in all.
func startLoad(client *traffic.Client, host string, rate, limit int) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		var wg sync.WaitGroup
		defer wg.Wait()
		for sent := 0; sent < limit; sent++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			at := time.Now()
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := client.Get(ctx, host, "/")
				if ctx.Err() != nil {
					return
				}
				s := sample{at: at}
				if err == nil {
					s.backend = r.Backend
				}
				l.mu.Lock()
				l.samples = append(l.samples, s)
				l.mu.Unlock()
			}()
		}
	}()
	return l
}

// firstSince is the send time of the first request at or after since answered by backend.
func (l *load) firstSince(since time.Time, backend string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, s := range l.samples {
		if !s.at.Before(since) && s.backend == backend && (first.IsZero() || s.at.Before(first)) {
			first = s.at
		}
	}
	return first, !first.IsZero()
}

// finish stops the load and returns the requests sent at or after since, in send order.
func (l *load) finish(since time.Time) []sample {
	l.stop()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []sample
	for _, s := range l.samples {
		if !s.at.Before(since) {
			out = append(out, s)
		}
	}
	sortByTime(out)
	return out
}
