package bench

import (
	"math"
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

// Summarise returns the p50, p95 and maximum of ds (ds is left as it is).
func Summarise(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return Latency{
		P50Seconds: Percentile(s, 0.50).Seconds(), P95Seconds: Percentile(s, 0.95).Seconds(),
		MaxSeconds: s[len(s)-1].Seconds(), Samples: len(s),
	}
}

// Percentile is the nearest-rank p-quantile (0 < p <= 1) of sorted, which must not be empty: the smallest sample
// at least a fraction p of the samples do not exceed.
func Percentile(sorted []time.Duration, p float64) time.Duration { return sorted[Rank(p, len(sorted))] }

// Rank is the index of the nearest-rank p-quantile among n sorted samples, for samples of other types.
func Rank(p float64, n int) int { return max(0, int(math.Ceil(p*float64(n)))-1) }
