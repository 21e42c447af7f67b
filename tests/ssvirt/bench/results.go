package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"
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
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	return latency{P50Millis: ms(d[len(d)/2]), P95Millis: ms(d[(len(d)*95)/100]), MaxMillis: ms(d[len(d)-1]), Count: len(d)}
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

func (r results) write(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func (r results) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "database\t%s\n", r.Database)
	fmt.Fprintf(tw, "VDC creates/s (namespace+quota+policy, %d concurrent)\t%.1f\n", r.Concurrency, r.VDCCreatesPerSec)
	fmt.Fprintf(tw, "VDC create p50/p95\t%.1f / %.1f ms\n", r.VDCCreate.P50Millis, r.VDCCreate.P95Millis)
	fmt.Fprintf(tw, "catalog list at %d Templates p50/p95 (target p95 <= %.0f ms)\t%.2f / %.2f ms\n", r.Templates, r.CatalogListTarget, r.CatalogList.P50Millis, r.CatalogList.P95Millis)
	fmt.Fprintf(tw, "instantiation to TemplateInstance p50/p95\t%.1f / %.1f ms\n", r.Instantiate.P50Millis, r.Instantiate.P95Millis)
	fmt.Fprintf(tw, "RSS, cache warm\t%.1f MiB\n", r.RSSMiBWarm)
	_ = tw.Flush()
}
