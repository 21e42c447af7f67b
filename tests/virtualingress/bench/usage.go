package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	benchkit "github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
)

// usageComponents are the processes whose CPU a scale run reports: the control plane, Kyverno's two controllers, and
// this process (the status controller and the bench's own clients).
var usageComponents = []string{devcluster.ComponentAPIServer, devcluster.ComponentEtcd, devcluster.ComponentKyverno, devcluster.ComponentKyvernoBackground, "bench"}

// topRequests is how many (verb, resource) pairs a scale run reports: enough to see where the API server's work goes.
const topRequests = 8

// usage is what a scale run cost: CPU seconds per process, and the API server's most frequent requests, per trigger.
// On two cores the converge time is bounded by these sums, so they show which process a faster design must spare.
type usage struct {
	CPUSeconds map[string]float64 `json:"cpuSeconds"`
	// Requests are "VERB resource" (apiserver_request_total's labels) with their count per trigger, most frequent first.
	Requests []requestCount `json:"apiRequestsPerTrigger"`
	// RequestsPerTrigger is all of the API server's requests per trigger.
	RequestsPerTrigger float64 `json:"apiRequestsPerTriggerTotal"`
}

type requestCount struct {
	Request string  `json:"request"`
	Count   float64 `json:"perTrigger"`
}

// usageSnapshot is the counters at one moment.
type usageSnapshot struct {
	pids     map[string]int
	cpu      map[string]float64
	requests map[string]float64
}

func (b *bench) usageSnapshot(ctx context.Context) (usageSnapshot, error) {
	s := usageSnapshot{pids: map[string]int{}, cpu: map[string]float64{}}
	for _, c := range usageComponents {
		pid := os.Getpid()
		if c != "bench" {
			pid = b.cluster.PID(c)
		}
		s.pids[c], s.cpu[c] = pid, benchkit.CPUSeconds(pid)
	}
	var err error
	s.requests, err = b.apiRequestsByKind(ctx)
	return s, err
}

// since is the usage from before to s, for n triggers. A process restarted in between (Kyverno's controllers lose
// their lease under load) counts from its restart only.
func (s usageSnapshot) since(before usageSnapshot, n int) *usage {
	u := &usage{CPUSeconds: map[string]float64{}}
	for c, v := range s.cpu {
		if s.pids[c] != before.pids[c] {
			u.CPUSeconds[c] = v
			continue
		}
		u.CPUSeconds[c] = v - before.cpu[c]
	}
	var total float64
	for k, v := range s.requests {
		d := v - before.requests[k]
		total += d
		if d > 0 {
			u.Requests = append(u.Requests, requestCount{Request: k, Count: d / float64(n)})
		}
	}
	sort.Slice(u.Requests, func(i, j int) bool { return u.Requests[i].Count > u.Requests[j].Count })
	u.Requests = u.Requests[:min(len(u.Requests), topRequests)]
	u.RequestsPerTrigger = total / float64(n)
	return u
}

// cpu is the CPU seconds of usageComponents, in that order, "/"-separated.
func (u *usage) cpu() string {
	if u == nil {
		return "-"
	}
	parts := make([]string, len(usageComponents))
	for i, c := range usageComponents {
		parts[i] = fmt.Sprintf("%.0f", u.CPUSeconds[c])
	}
	return strings.Join(parts, " / ")
}

// requests is the most frequent requests with their count per trigger.
func (u *usage) requests() string {
	if u == nil {
		return "-"
	}
	parts := make([]string, len(u.Requests))
	for i, r := range u.Requests {
		parts[i] = fmt.Sprintf("%s %.1f", r.Request, r.Count)
	}
	return strings.Join(parts, ", ")
}
