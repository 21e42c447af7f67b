// Package stat summarises the apps-ingress benchmarks' latencies.
package stat

import (
	"slices"
	"time"
)

// Latency summarises one delay over its samples.
type Latency struct {
	P50Seconds float64 `json:"p50Seconds"`
	P95Seconds float64 `json:"p95Seconds"`
	MaxSeconds float64 `json:"maxSeconds"`
	Samples    int     `json:"samples"`
}

// Summarise returns the p50, p95 and maximum of ds.
func Summarise(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) float64 { return s[min(len(s)-1, int(q*float64(len(s))))].Seconds() }
	return Latency{P50Seconds: at(0.50), P95Seconds: at(0.95), MaxSeconds: s[len(s)-1].Seconds(), Samples: len(s)}
}
