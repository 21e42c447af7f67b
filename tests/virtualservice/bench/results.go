package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"
)

// phase is one convergence: from its start (operator start, ConfigMap edit) until every VirtualService matched.
type phase struct {
	ConvergeSeconds float64 `json:"convergeSeconds"`
	// WritesPerVSWatch counts ADDED/MODIFIED events per VirtualService on an independent watch.
	WritesPerVSWatch float64 `json:"writesPerVirtualServiceWatch"`
	// WritesPerVSOperator is the operator's own count of apply requests per VirtualService.
	WritesPerVSOperator float64 `json:"writesPerVirtualServiceOperator"`
	Reconciles          float64 `json:"reconciles"`
	ReconcilesPerSecond float64 `json:"reconcilesPerSecond"`
	Conflicts           float64 `json:"conflicts"`
	PeakRSSMiB          float64 `json:"peakRSSMiB"`
	// RouteDecreases counts writes, seen on the watch, that left a VirtualService with fewer routes than before.
	RouteDecreases int `json:"routeCountDecreases"`
	// AfterLastCreateSeconds is, in the phase where Services are created under the running operator, the time from
	// the last create until every VirtualService is final.
	AfterLastCreateSeconds float64 `json:"afterLastCreateSeconds,omitempty"`
}

type results struct {
	Services            int     `json:"productionServices"`
	DeveloperNamespaces int     `json:"developerNamespaces"`
	OperatorQPS         float64 `json:"operatorQPS"`
	OperatorWorkers     int     `json:"operatorWorkers"`
	OperatorBatchWindow float64 `json:"operatorBatchWindowSeconds"`
	// Running: the operator runs while every Service is created (the reference operator's measurement).
	Running phase `json:"createWhileRunning"`
	// Create: every Service exists, the operator starts with no VirtualService.
	Create phase `json:"create"`
	// Relabel: labels of some production Services change; nothing about their routes does.
	Relabel    phase   `json:"relabel"`
	Relabelled int     `json:"relabelledServices"`
	ConfigEdit phase   `json:"configEdit"`
	PeakRSSMiB float64 `json:"peakRSSMiB"`
}

// measure runs action (which starts the phase) and waits for every VirtualService to match want, counting from
// start, or from the action when start is zero. The counters are read before the action, so nothing it causes is
// missed.
func measure(ctx context.Context, w *watcher, op meter, want routeState, start time.Time, action func() error) (phase, error) {
	done, writesBefore := w.expect(want)
	_, decreasesBefore := w.counts()
	before := metricsOrZero(op)
	if start.IsZero() {
		start = time.Now()
	}
	if err := action(); err != nil {
		return phase{}, err
	}
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-ctx.Done():
			return phase{}, fmt.Errorf("%d of %d VirtualServices converged: %w", w.progress(), w.expected, ctx.Err())
		case <-tick.C:
			fmt.Fprintf(os.Stderr, "bench: %d/%d converged after %s\n", w.progress(), w.expected, time.Since(start).Round(time.Second))
		case <-done:
			waiting = false
		}
	}
	doneAt, _ := w.result()
	return summarise(w, op, before, writesBefore, decreasesBefore, doneAt.Sub(start), w.expected)
}

// observeWindow runs action, waits for d and reports what happened meanwhile, per VirtualService of the n touched:
// for changes that should leave the routes as they are, where there is no convergence to wait for.
func observeWindow(ctx context.Context, w *watcher, op meter, n int, d time.Duration, action func() error) (phase, error) {
	writesBefore, decreasesBefore := w.counts()
	before := metricsOrZero(op)
	if err := action(); err != nil {
		return phase{}, err
	}
	select {
	case <-ctx.Done():
		return phase{}, ctx.Err()
	case <-time.After(d):
	}
	return summarise(w, op, before, writesBefore, decreasesBefore, d, n)
}

func summarise(w *watcher, op meter, before map[string]float64, writesBefore, decreasesBefore int, took time.Duration, n int) (phase, error) {
	writes, decreases := w.counts()
	after, err := op.metrics()
	if err != nil {
		return phase{}, err
	}
	secs := took.Seconds()
	reconciles := sum(after, "controller_runtime_reconcile_total", `controller="virtualservice-operator"`) -
		sum(before, "controller_runtime_reconcile_total", `controller="virtualservice-operator"`)
	return phase{
		ConvergeSeconds:     secs,
		WritesPerVSWatch:    float64(writes-writesBefore) / float64(n),
		WritesPerVSOperator: (sum(after, "virtualservice_operator_virtualservice_writes_total", `operation="apply"`) - sum(before, "virtualservice_operator_virtualservice_writes_total", `operation="apply"`)) / float64(n),
		Reconciles:          reconciles,
		ReconcilesPerSecond: reconciles / secs,
		Conflicts:           sum(after, "virtualservice_operator_write_conflicts_total") - sum(before, "virtualservice_operator_write_conflicts_total"),
		PeakRSSMiB:          op.peakRSSMiB(),
		RouteDecreases:      decreases - decreasesBefore,
	}, nil
}

// metricsOrZero tolerates an operator that is not serving metrics yet (phase 1 starts with the process).
func metricsOrZero(op meter) map[string]float64 {
	m, err := op.metrics()
	if err != nil {
		return map[string]float64{}
	}
	return m
}

// Print is the results as a table.
func (r *results) Print(out io.Writer) {
	fmt.Fprintf(out, "\nvirtualservice-operator: %d production Services x %d developer namespaces (operator: %g QPS, %d workers, %gs batch window)\n\n",
		r.Services, r.DeveloperNamespaces, r.OperatorQPS, r.OperatorWorkers, r.OperatorBatchWindow)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tconverge (s)\twrites/VS (watch)\twrites/VS (operator)\troute-count decreases\treconciles\treconciles/s\tconflicts\tpeak RSS (MiB)\t")
	for _, p := range []struct {
		name string
		ph   phase
	}{
		{"create while running", r.Running},
		{"create (cold start)", r.Create},
		{fmt.Sprintf("relabel %d production Services (window)", r.Relabelled), r.Relabel},
		{"ConfigMap edit", r.ConfigEdit},
	} {
		fmt.Fprintf(tw, "%s\t%.1f\t%.2f\t%.2f\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t\n", p.name, p.ph.ConvergeSeconds, p.ph.WritesPerVSWatch,
			p.ph.WritesPerVSOperator, p.ph.RouteDecreases, p.ph.Reconciles, p.ph.ReconcilesPerSecond, p.ph.Conflicts, p.ph.PeakRSSMiB)
	}
	_ = tw.Flush()
	fmt.Fprintf(out, "\ncreate while running: converged %.1f s after the last create (target <= 25 s), %.2f writes per "+
		"VirtualService (target <= 2), %d route-count decreases (target 0)\n",
		r.Running.AfterLastCreateSeconds, r.Running.WritesPerVSWatch, r.Running.RouteDecreases+r.Relabel.RouteDecreases)
	fmt.Fprintf(out, "\npeak RSS of the operator over the run: %.0f MiB\n", r.PeakRSSMiB)
}
