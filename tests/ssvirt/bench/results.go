package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
)

type latency struct {
	P50Millis float64 `json:"p50Millis"`
	P95Millis float64 `json:"p95Millis"`
	MaxMillis float64 `json:"maxMillis"`
	Count     int     `json:"count"`
}

func latencies(d []time.Duration) latency {
	if len(d) == 0 {
		return latency{}
	}
	s := slices.Sorted(slices.Values(d))
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	return latency{P50Millis: ms(bench.Percentile(s, 0.50)), P95Millis: ms(bench.Percentile(s, 0.95)), MaxMillis: ms(s[len(s)-1]), Count: len(s)}
}

type results struct {
	Database          string  `json:"database"`
	Templates         int     `json:"templates"`
	VDCs              int     `json:"vdcs"`
	Concurrency       int     `json:"concurrency"`
	VDCCreatesPerSec  float64 `json:"vdcCreatesPerSecond"`
	VDCCreate         latency `json:"vdcCreate"`
	CatalogList       latency `json:"catalogItemList"`
	Instantiate       latency `json:"instantiateToTemplateInstance"`
	RSSMiBWarm        float64 `json:"rssMiBWarmCache"`
	CatalogListTarget float64 `json:"catalogListP95TargetMillis"`
}

// report holds one run of the workload per database, the same workload on each.
type report struct {
	Runs []results `json:"runs"`
}

// Print writes a row per database.
func (r report) Print(w io.Writer) {
	if len(r.Runs) == 0 {
		return
	}
	first := r.Runs[0]
	fmt.Fprintf(w, "%d VDC creates (namespace+quota+policy, %d concurrent), %d catalog lists at %d Templates (target p95 <= %.0f ms), %d instantiations; latencies p50 / p95 in ms\n",
		first.VDCs, first.Concurrency, first.CatalogList.Count, first.Templates, first.CatalogListTarget, first.Instantiate.Count)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "database\tVDC creates/s\tVDC create\tcatalog list\tinstantiation to TemplateInstance\tRSS, cache warm")
	for _, x := range r.Runs {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f / %.1f\t%.2f / %.2f\t%.1f / %.1f\t%.1f MiB\n", x.Database, x.VDCCreatesPerSec,
			x.VDCCreate.P50Millis, x.VDCCreate.P95Millis, x.CatalogList.P50Millis, x.CatalogList.P95Millis,
			x.Instantiate.P50Millis, x.Instantiate.P95Millis, x.RSSMiBWarm)
	}
	_ = tw.Flush()
}
