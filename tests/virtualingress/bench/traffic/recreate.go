package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualingress/traffic"
)

// How a tenant Service is replaced.
const (
	// deleteThenCreate is what the Kubevirt CCM does when a tenant Service is replaced.
	deleteThenCreate = "delete-then-create"
	// createThenDelete: the new Service is serving before the old one goes.
	createThenDelete = "create-then-delete"
	// throughRepair is deleteThenCreate while Kyverno drops every update request (updateRequestThreshold 0, as under
	// a flood); the status controller's repair brings the route back once Kyverno takes requests again.
	throughRepair = "through-repair"
)

var cases = []string{deleteThenCreate, createThenDelete, throughRepair}

// outcome is one recreation, seen by the client and by the API server. The durations count from the first write of
// the recreation (a delete or a create).
type outcome struct {
	Sent   int `json:"sent"`
	Failed int `json:"failed"`
	// Gap is from the first failed request to the first one the new backend answered; 0 without failures.
	Gap time.Duration `json:"gapNs"`
	// Generated: the generated Ingress or HTTPRoute names the new Service (Kyverno's hop).
	Generated time.Duration `json:"generatedNs"`
	// Endpoints: the new Service's EndpointSlice holds a ready endpoint (the endpointslice controller's hop).
	Endpoints time.Duration `json:"endpointsNs"`
	// Served: the first request the new backend answered was sent (the ingress controller's reload follows
	// Generated and Endpoints).
	Served time.Duration `json:"servedNs"`
	// RepairWait is from Kyverno taking requests again to the first request the new backend answered (throughRepair).
	RepairWait time.Duration `json:"repairWaitNs,omitempty"`
}

// tenantState is the Service the route follows now and the echo Pod behind it.
type tenantState struct {
	service, backend string
}

func other(backend string) string {
	if backend == "a" {
		return "b"
	}
	return "a"
}

// recreate replaces the subject's Service by one with a new name in front of the other echo Pod, the way c says,
// while a client sends requests through the controller, and reports what the client saw.
func (b *bench) recreate(ctx context.Context, s subject, c string, cur *tenantState) (outcome, error) {
	services := b.kube.CoreV1().Services(s.namespace)
	next := other(cur.backend)
	l := startLoad(b.client, s.host, b.rate, b.rate*int(b.timeout/time.Second))
	begin := time.Now()
	if _, err := waitFirst(l, begin, cur.backend, 30*time.Second); err != nil {
		l.finish(begin)
		return outcome{}, fmt.Errorf("before the recreation, %s is not served by %s: %w", s.host, cur.service, err)
	}
	var restored time.Time
	// start is the first write of the recreation; the hop watch reads it once the new Service exists.
	start := time.Now()
	// The new Service's name, once created; read by the hop watch meanwhile.
	var newName atomic.Value
	newName.Store("")
	create := func() error {
		created, err := services.Create(ctx, traffic.TenantService(s.labels, next), metav1.CreateOptions{})
		if err == nil {
			newName.Store(created.Name)
		}
		return err
	}
	remove := func() error { return services.Delete(ctx, cur.service, metav1.DeleteOptions{}) }
	if c == throughRepair {
		var err error
		if b.skipped, err = b.cluster.CountInLog(devcluster.ComponentKyverno, skippedLine); err != nil {
			l.finish(begin)
			return outcome{}, err
		}
		// Kyverno must have reloaded the threshold before the first write.
		if err := b.cluster.SetKyvernoUpdateRequestThreshold(ctx, "0"); err != nil {
			l.finish(begin)
			return outcome{}, err
		}
		time.Sleep(kyvernoConfigReload)
		start = time.Now()
	}
	hops := b.watchHops(ctx, s, func() string { return newName.Load().(string) }, start)
	var err error
	switch c {
	case deleteThenCreate:
		err = errors.Join(remove(), create())
	case createThenDelete:
		if err = create(); err == nil {
			if err = b.waitEndpoints(ctx, s.namespace, newName.Load().(string)); err == nil {
				err = remove()
			}
		}
	case throughRepair:
		restored, err = b.restoreAfterASkip(ctx, errors.Join(remove(), create()))
	}
	if err != nil {
		l.finish(start)
		return outcome{}, err
	}
	served, err := waitFirst(l, start, next, b.timeout)
	// A moment more: requests that overlap the switch settle.
	time.Sleep(300 * time.Millisecond)
	samples := l.finish(start)
	h := hops.stop()
	if err != nil {
		return outcome{}, fmt.Errorf("%s: the new Service %s was never served: %w", c, newName.Load(), err)
	}
	o := outcome{Sent: len(samples), Served: served.Sub(start), Generated: h.generated, Endpoints: h.endpoints}
	var firstFailure time.Time
	for _, sm := range samples {
		if sm.backend == "" {
			o.Failed++
			if firstFailure.IsZero() {
				firstFailure = sm.at
			}
		}
	}
	if !firstFailure.IsZero() {
		o.Gap = served.Sub(firstFailure)
	}
	if !restored.IsZero() {
		o.RepairWait = served.Sub(restored)
	}
	cur.service, cur.backend = newName.Load().(string), next
	return o, nil
}

// waitFirst waits until a request sent at or after since was answered by backend, and returns when it was sent.
func waitFirst(l *load, since time.Time, backend string, timeout time.Duration) (time.Time, error) {
	var at time.Time
	// Every 20 ms, as the benchmark's other pollers: the time returned is the request's, this only ends the wait.
	err := poll.WaitEvery(context.Background(), timeout, 20*time.Millisecond, "an answer from "+backend, func() (bool, string, error) {
		var ok bool
		at, ok = l.firstSince(since, backend)
		return ok, "none", nil
	})
	return at, err
}

// restoreAfterASkip waits (after the recreation's writes, which returned err) until Kyverno has skipped the
// recreation's update requests (its count of skips rose and then held for a second), restores its
// updateRequestThreshold and returns when: from then on only the status controller's repair brings the route back.
func (b *bench) restoreAfterASkip(ctx context.Context, err error) (time.Time, error) {
	if err != nil {
		return time.Time{}, err
	}
	var settled time.Time
	err = poll.Wait(ctx, 30*time.Second, "Kyverno skipping the recreation's update requests (its count of skips risen, then held for a second)",
		func() (bool, string, error) {
			n, err := b.cluster.CountInLog(devcluster.ComponentKyverno, skippedLine)
			if err != nil {
				return false, "", err
			}
			if n > b.skipped {
				b.skipped, settled = n, time.Now()
			}
			return !settled.IsZero() && time.Since(settled) >= time.Second, fmt.Sprintf("%d skips", n), nil
		})
	if err != nil {
		return time.Time{}, err
	}
	if err := b.cluster.SetKyvernoUpdateRequestThreshold(ctx, restoredThreshold); err != nil {
		return time.Time{}, err
	}
	return time.Now(), nil
}

const (
	// kyvernoConfigReload is how long Kyverno takes to apply a change of its ConfigMap (it watches it).
	kyvernoConfigReload = 3 * time.Second
	skippedLine         = "UpdateRequest creation skipped"
	// restoredThreshold is the chart's and Kyverno's default updateRequestThreshold.
	restoredThreshold = "1000"
)

// hopTimes are when, after a recreation began, the generated object named the new Service and its endpoints were ready.
type hopTimes struct{ generated, endpoints time.Duration }

type hopWatch struct {
	stopCh chan struct{}
	done   chan hopTimes
}

// watchHops polls, every 20 ms, the generated object and the new Service's EndpointSlices.
func (b *bench) watchHops(ctx context.Context, s subject, newService func() string, start time.Time) *hopWatch {
	w := &hopWatch{stopCh: make(chan struct{}), done: make(chan hopTimes, 1)}
	go func() {
		var h hopTimes
		defer func() { w.done <- h }()
		for {
			select {
			case <-w.stopCh:
				return
			case <-time.After(20 * time.Millisecond):
			}
			name := newService()
			if name == "" {
				continue
			}
			if h.generated == 0 {
				if ok, _ := s.generatedNames(ctx, name); ok {
					h.generated = time.Since(start)
				}
			}
			if h.endpoints == 0 {
				if ok, _ := b.endpointsReady(ctx, s.namespace, name); ok {
					h.endpoints = time.Since(start)
				}
			}
		}
	}()
	return w
}

func (w *hopWatch) stop() hopTimes {
	close(w.stopCh)
	return <-w.done
}

// endpointsReady says whether an EndpointSlice of the Service holds a ready endpoint.
func (b *bench) endpointsReady(ctx context.Context, namespace, service string) (bool, error) {
	slices, err := b.kube.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + service})
	if err != nil {
		return false, err
	}
	for _, sl := range slices.Items {
		for _, ep := range sl.Endpoints {
			if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				return true, nil
			}
		}
	}
	return false, nil
}

// waitEndpoints waits (a minute at most) until endpointsReady.
func (b *bench) waitEndpoints(ctx context.Context, namespace, service string) error {
	// Every 20 ms: the old Service is deleted as soon as the new one's endpoints are ready.
	return poll.WaitEvery(ctx, time.Minute, 20*time.Millisecond, "the endpoints of Service "+namespace+"/"+service+" ready",
		func() (bool, string, error) {
			ok, err := b.endpointsReady(ctx, namespace, service)
			return ok, "", err
		})
}

// namesService says whether obj's spec names service (as an Ingress backend or an HTTPRoute backendRef).
func namesService(spec any, service string) bool {
	raw, _ := json.Marshal(spec)
	return strings.Contains(string(raw), fmt.Sprintf(`"name":%q`, service))
}

func sortByTime(s []sample) {
	slices.SortFunc(s, func(a, b sample) int { return a.at.Compare(b.at) })
}
