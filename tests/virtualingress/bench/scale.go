package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

const scaleTarget = 60 * time.Second

// scaleRun measures n VirtualIngresses over n existing Services in one namespace, in two phases:
//  1. the Services are created and their events drained (no VirtualIngress exists yet), then the n VirtualIngresses
//     are created as fast as the API server takes them: time until every Ingress routes to its Service;
//  2. with all n resolved, a burst of Service recreations (a tenant cluster restarting its LoadBalancers): time until
//     every affected Ingress follows, or the burst timeout. Each Service event makes Kyverno check the namespace's
//     VirtualIngresses, so this phase shows the cost of Service events at scale.
func (b *bench) scaleRun(ctx context.Context, n, burst int) (*scale, error) {
	ns, err := b.scaleNamespace(ctx, n)
	if err != nil {
		return nil, err
	}
	if err := b.waitUpdateRequestsDrained(ctx); err != nil {
		return nil, err
	}
	iw, err := b.watchIngresses(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer iw.stop()
	before, err := b.usageSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	peakURs := b.trackUpdateRequests(ctx)

	start := time.Now()
	if err := b.createVirtualIngresses(ctx, ns, n); err != nil {
		return nil, err
	}
	created := time.Since(start)
	resolved, _ := iw.countResolved(n, func(i int) string { return fmt.Sprintf("svc-%d", i) }, b.timeout, nil)
	converged := time.Since(start)
	peak := peakURs()
	after, err := b.usageSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	objectBytes, err := b.meanBytes(ctx, virtualingress.GVR, ns)
	if err != nil {
		return nil, err
	}

	// Phase 2: recreate the first burst Services under new names, all at once.
	burstStart := time.Now()
	if err := parallel(burst, func(i int) error {
		if err := b.kube.CoreV1().Services(ns).Delete(ctx, fmt.Sprintf("svc-%d", i), metav1.DeleteOptions{}); err != nil {
			return err
		}
		_, err := b.createService(ctx, ns, fmt.Sprintf("svc-%d-new", i), labelsFor(i))
		return err
	}); err != nil {
		return nil, err
	}
	recreated := time.Since(burstStart)
	followed, last := iw.countResolved(burst, func(i int) string { return fmt.Sprintf("svc-%d-new", i) }, b.burstTimeout, nil)
	burstConverged := time.Since(burstStart)
	if followed == burst && burst > 0 {
		burstConverged = last.Sub(burstStart)
	}
	right, err := b.ingressesRight(ctx, ns, n, func(i int) string {
		if i < burst {
			return fmt.Sprintf("svc-%d-new", i)
		}
		return fmt.Sprintf("svc-%d", i)
	})
	if err != nil {
		return nil, err
	}

	return &scale{
		VirtualIngresses:     n,
		CreateSeconds:        created.Seconds(),
		ConvergeSeconds:      converged.Seconds(),
		Resolved:             resolved,
		LostUpdateRequests:   n - resolved,
		SkippedByThreshold:   b.skippedByThreshold() - b.skippedBefore,
		FailedToCreate:       b.failedToCreate() - b.failedBefore,
		PeakUpdateRequests:   peak,
		Usage:                after.since(before, n),
		BurstRecreations:     burst,
		BurstFollowed:        followed,
		BurstRecreateSeconds: recreated.Seconds(),
		BurstConvergeSeconds: burstConverged.Seconds(),
		RightAtEnd:           right,
		KyvernoRestarts:      b.kyverno.take(),
		BackgroundPeakMemMiB: peakMemoryMiB(b.cluster.PID(devcluster.ComponentKyvernoBackground)),
		AdmissionPeakMemMiB:  peakMemoryMiB(b.cluster.PID(devcluster.ComponentKyverno)),
		TargetSeconds:        scaleTarget.Seconds(),
		ObjectBytes:          objectBytes,
	}, nil
}

// createVirtualIngresses creates vi-<i> selecting svc-<i>'s labels (i < n) as fast as the API server takes them.
func (b *bench) createVirtualIngresses(ctx context.Context, ns string, n int) error {
	return parallel(n, func(i int) error {
		vi := virtualingress.New(ns, fmt.Sprintf("vi-%d", i), virtualingress.CoderSpec(labelsFor(i)))
		_, err := b.dyn.Resource(virtualingress.GVR).Namespace(ns).Create(ctx, vi, metav1.CreateOptions{})
		return err
	})
}

// scaleNamespace creates the scale runs' namespace with n Services svc-<i>, created 16 at a time, as a CCM resync
// or a tenant cluster's restore creates them.
func (b *bench) scaleNamespace(ctx context.Context, n int) (string, error) {
	ns, err := b.namespace(ctx, "bench-scale")
	if err != nil {
		return "", err
	}
	return ns, parallel(n, func(i int) error {
		_, err := b.createService(ctx, ns, fmt.Sprintf("svc-%d", i), labelsFor(i))
		return err
	})
}

// ingressesRight counts the Ingresses generated from vi-<i> (i < n) that route to service(i) when the run ends: an
// Ingress that was right once and went back to a deleted Service is not counted.
func (b *bench) ingressesRight(ctx context.Context, ns string, n int, service func(int) string) (int, error) {
	list, err := b.kube.NetworkingV1().Ingresses(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	right := 0
	for i := range list.Items {
		var idx int
		if _, err := fmt.Sscanf(list.Items[i].Name, "vi-%d"+virtualingress.NameSuffix, &idx); err == nil && idx < n && firstService(&list.Items[i]) == service(idx) {
			right++
		}
	}
	return right, nil
}

// deletePendingUpdateRequests deletes the UpdateRequests Kyverno left pending and returns how many there were.
func (b *bench) deletePendingUpdateRequests(ctx context.Context) (int, error) {
	pending, err := devcluster.PendingUpdateRequests(ctx, b.dyn)
	if err != nil {
		return 0, err
	}
	for _, ur := range pending {
		if err := b.dyn.Resource(devcluster.UpdateRequestGVR).Namespace(devcluster.KyvernoNamespace).Delete(ctx, ur.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return 0, err
		}
	}
	return len(pending), nil
}

// waitUpdateRequestsDrained waits until Kyverno has no UpdateRequest left pending.
func (b *bench) waitUpdateRequestsDrained(ctx context.Context) error {
	// Every 500 ms: each list of UpdateRequests loads the API server the benchmark measures.
	return poll.WaitEvery(ctx, b.timeout, 500*time.Millisecond, "Kyverno's UpdateRequests drained", func() (bool, string, error) {
		pending, err := devcluster.PendingUpdateRequests(ctx, b.dyn)
		return err == nil && len(pending) == 0, fmt.Sprintf("%d pending", len(pending)), err
	})
}

// countResolved counts distinct Ingresses generated from vi-<i> (i < n) routing to service(i), until all n are seen, the
// timeout, or stop is closed (nil: never), and returns when the last one was seen.
func (iw *ingressWatch) countResolved(n int, service func(int) string, timeout time.Duration, stop <-chan struct{}) (int, time.Time) {
	seen := map[string]bool{}
	var last time.Time
	deadline := time.After(timeout)
	for len(seen) < n {
		select {
		case ev, ok := <-iw.events:
			if !ok {
				return len(seen), last
			}
			ing, isIngress := ev.Object.(*networkingv1.Ingress)
			if !isIngress {
				continue
			}
			var i int
			if _, err := fmt.Sscanf(ing.Name, "vi-%d"+virtualingress.NameSuffix, &i); err != nil || i >= n {
				continue
			}
			if firstService(ing) == service(i) && !seen[ing.Name] {
				seen[ing.Name] = true
				last = time.Now()
			}
		case <-deadline:
			return len(seen), last
		case <-stop:
			return len(seen), last
		}
	}
	return len(seen), last
}

// parallel runs f for 0..n-1 on 16 workers, returning the first error.
func parallel(n int, f func(int) error) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// trackUpdateRequests samples the number of Kyverno UpdateRequests, as Kyverno's updateRequestThreshold counts them
// (all, whatever their state), until the returned function is called, which returns the peak. It lists metadata
// only, once a second, as Kyverno's own check does: a full list carries every request's admission payload, and at a
// thousand requests the bench's own reads would load the API server it measures.
func (b *bench) trackUpdateRequests(ctx context.Context) func() int {
	ctx, cancel := context.WithCancel(ctx)
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			list, err := b.meta.Resource(devcluster.UpdateRequestGVR).Namespace(devcluster.KyvernoNamespace).List(ctx, metav1.ListOptions{})
			if err == nil && int64(len(list.Items)) > peak.Load() {
				peak.Store(int64(len(list.Items)))
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	return func() int {
		cancel()
		<-done
		return int(peak.Load())
	}
}

// apiRequestsByKind is the API server's count of served requests (apiserver_request_total, from its /metrics) by
// "VERB resource[/subresource]".
func (b *bench) apiRequestsByKind(ctx context.Context) (map[string]float64, error) {
	raw, err := b.kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	counts := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		labels, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		var v float64
		if _, err := fmt.Sscanf(line[strings.LastIndexByte(line, ' ')+1:], "%g", &v); err != nil {
			continue
		}
		l := metricLabels(labels)
		key := l["verb"] + " " + l["resource"]
		if sub := l["subresource"]; sub != "" {
			key += "/" + sub
		}
		counts[key] += v
	}
	return counts, nil
}

// metricLabels parses a Prometheus text-format label set up to its closing brace (`a="x",b="y"} 3`). Values here
// hold no quotes, so escapes are not handled.
func metricLabels(s string) map[string]string {
	labels := map[string]string{}
	for s != "" && s[0] != '}' {
		name, rest, ok := strings.Cut(s, `="`)
		if !ok {
			break
		}
		value, rest, _ := strings.Cut(rest, `"`)
		labels[name] = value
		s = strings.TrimPrefix(rest, ",")
	}
	return labels
}

// peakMemoryMiB reads a process's peak resident set size (VmHWM) from /proc.
func peakMemoryMiB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%g kB", &kb); err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}

// skippedByThreshold counts the UpdateRequests Kyverno's admission controller refused to create because
// updateRequestThreshold pending ones existed, over every run of the controller (its log is appended to).
func (b *bench) skippedByThreshold() int {
	return countInFile(b.cluster.LogPath(devcluster.ComponentKyverno), "UpdateRequest creation skipped")
}

// failedToCreate counts the UpdateRequests Kyverno's admission controller gave up creating (it retries with a
// back-off; under a burst the API server times the creations out), over every run of the controller.
func (b *bench) failedToCreate() int {
	return countInFile(b.cluster.LogPath(devcluster.ComponentKyverno), "failed to update request CR")
}

func countInFile(path, needle string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(data), needle)
}
