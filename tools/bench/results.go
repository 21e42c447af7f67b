package main

import (
	"fmt"
	"io"
	"runtime"
	"sort"
	"text/tabwriter"
	"time"
)

type results struct {
	Environment map[string]string `json:"environment"`
	Create      latency           `json:"createToIngress"`
	Recreate    latency           `json:"serviceRecreateToIngressUpdated"`
	Scale       *scale            `json:"scale,omitempty"`
}

// latency summarises samples in milliseconds.
type latency struct {
	Samples int     `json:"samples"`
	P50     float64 `json:"p50Ms"`
	P95     float64 `json:"p95Ms"`
	Max     float64 `json:"maxMs"`
	Target  float64 `json:"targetP95Ms"`
}

type scale struct {
	VirtualIngresses     int     `json:"virtualIngresses"`
	CreateSeconds        float64 `json:"createAllSeconds"`
	ConvergeSeconds      float64 `json:"convergeSeconds"`
	Resolved             int     `json:"resolved"`
	LostUpdateRequests   int     `json:"lostUpdateRequests"`
	SkippedByThreshold   int     `json:"updateRequestsSkippedByThreshold"`
	PeakUpdateRequests   int     `json:"peakPendingUpdateRequests"`
	APIRequestsPerVI     float64 `json:"apiRequestsPerVirtualIngress"`
	BurstRecreations     int     `json:"burstServiceRecreations"`
	BurstFollowed        int     `json:"burstIngressesFollowed"`
	BurstConvergeSeconds float64 `json:"burstConvergeSeconds"`
	BackgroundPeakMemMiB float64 `json:"backgroundControllerPeakMemoryMiB"`
	AdmissionPeakMemMiB  float64 `json:"admissionControllerPeakMemoryMiB"`
	TargetSeconds        float64 `json:"targetConvergeSeconds"`
}

func summarise(samples []time.Duration, target time.Duration) latency {
	ms := make([]float64, len(samples))
	for i, s := range samples {
		ms[i] = float64(s.Microseconds()) / 1000
	}
	sort.Float64s(ms)
	return latency{
		Samples: len(ms),
		P50:     percentile(ms, 50),
		P95:     percentile(ms, 95),
		Max:     percentile(ms, 100),
		Target:  float64(target.Milliseconds()),
	}
}

// percentile uses the nearest-rank method on sorted values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.5) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

func environment() map[string]string {
	return map[string]string{
		"go":         runtime.Version(),
		"cpus":       fmt.Sprint(runtime.NumCPU()),
		"kubernetes": "v1.36.3 (kube-apiserver, etcd v3.6.8, kube-controller-manager as local processes)",
		"kyverno":    "v1.19.1 (admission and background controllers as local processes)",
		"date":       time.Now().UTC().Format(time.RFC3339),
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func (r results) print(out io.Writer) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "\nmeasurement\tp50\tp95\tmax\ttarget\t")
	for _, l := range []struct {
		name string
		l    latency
	}{{"create -> Ingress", r.Create}, {"Service recreate -> Ingress updated", r.Recreate}} {
		fmt.Fprintf(w, "%s (n=%d)\t%.0f ms\t%.0f ms\t%.0f ms\tp95 <= %.0f ms: %s\t\n", l.name, l.l.Samples, l.l.P50, l.l.P95, l.l.Max, l.l.Target, verdict(l.l.P95 <= l.l.Target))
	}
	if s := r.Scale; s != nil {
		fmt.Fprintf(w, "\nscale: %d VirtualIngresses / %d Services, one namespace\t\t\t\t\t\n", s.VirtualIngresses, s.VirtualIngresses)
		fmt.Fprintf(w, "time to create all VirtualIngresses (admission)\t%.1f s\t\t\t\t\n", s.CreateSeconds)
		fmt.Fprintf(w, "time until all resolved\t%.1f s\t\t\t<= %.0f s: %s\t\n", s.ConvergeSeconds, s.TargetSeconds, verdict(s.Resolved == s.VirtualIngresses && s.ConvergeSeconds <= s.TargetSeconds))
		fmt.Fprintf(w, "resolved / lost\t%d / %d\t\t\tlost = 0: %s\t\n", s.Resolved, s.LostUpdateRequests, verdict(s.LostUpdateRequests == 0))
		fmt.Fprintf(w, "UpdateRequests skipped by threshold / peak pending\t%d / %d\t\t\t\t\n", s.SkippedByThreshold, s.PeakUpdateRequests)
		fmt.Fprintf(w, "API requests per VirtualIngress (all clients)\t%.1f\t\t\t\t\n", s.APIRequestsPerVI)
		fmt.Fprintf(w, "burst of %d Service recreations: Ingresses followed / time\t%d / %.1f s\t\t\t\t\n", s.BurstRecreations, s.BurstFollowed, s.BurstConvergeSeconds)
		fmt.Fprintf(w, "peak memory background / admission controller\t%.0f MiB / %.0f MiB\t\t\t\t\n", s.BackgroundPeakMemMiB, s.AdmissionPeakMemMiB)
	}
	_ = w.Flush()
}
