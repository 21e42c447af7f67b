package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	benchkit "github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
)

// Targets: the gap a delete-then-create recreation leaves, and the failures a create-then-delete may cause.
const gapTarget = time.Second

type results struct {
	Machine string `json:"machine"`
	Rate    int    `json:"ratePerSecond"`
	// Engines: engine → kind → case → one outcome per recreation.
	Engines map[string]map[string]map[string][]outcome `json:"engines"`
}

func (r results) print(w io.Writer) {
	fmt.Fprintf(w, "\nTenant Service recreation under %d requests/s through Traefik (%s); durations from the first write of the recreation\n\n", r.Rate, r.Machine)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "engine\tkind\tcase\tn\tfailed p50/p95/max (total)\tgap p50/p95/max\tgenerated p50/p95/max\tendpoints p50/p95/max\tserved p50/p95/max\trepair wait p50/p95/max\ttarget")
	engines := keys(r.Engines)
	for _, engine := range engines {
		for _, kind := range kinds {
			for _, c := range cases {
				runs := r.Engines[engine][kind][c]
				if len(runs) == 0 {
					continue
				}
				failed, total := failures(runs)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s (%d)\t%s\t%s\t%s\t%s\t%s\t%s\n", engine, kind, c, len(runs),
					ints(failed), total, durations(runs, func(o outcome) time.Duration { return o.Gap }),
					durations(runs, func(o outcome) time.Duration { return o.Generated }),
					durations(runs, func(o outcome) time.Duration { return o.Endpoints }),
					durations(runs, func(o outcome) time.Duration { return o.Served }),
					repairWait(c, runs), target(c, runs, total))
			}
		}
	}
	_ = tw.Flush()
}

func target(c string, runs []outcome, failed int) string {
	switch c {
	case deleteThenCreate:
		gap := sorted(runs, func(o outcome) time.Duration { return o.Gap })
		p95 := benchkit.Percentile(gap, 0.95)
		return fmt.Sprintf("gap p95 ≤ %s: %s", ms(gapTarget), verdict(p95 <= gapTarget))
	case createThenDelete:
		return "0 failed: " + verdict(failed == 0)
	}
	return "(reported)"
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func repairWait(c string, runs []outcome) string {
	if c != throughRepair {
		return "-"
	}
	return durations(runs, func(o outcome) time.Duration { return o.RepairWait })
}

func failures(runs []outcome) ([]int, int) {
	out := make([]int, len(runs))
	total := 0
	for i, o := range runs {
		out[i], total = o.Failed, total+o.Failed
	}
	slices.Sort(out)
	return out, total
}

func ints(sortedCounts []int) string {
	at := func(p float64) int { return sortedCounts[benchkit.Rank(p, len(sortedCounts))] }
	return fmt.Sprintf("%d/%d/%d", at(0.5), at(0.95), sortedCounts[len(sortedCounts)-1])
}

func sorted(runs []outcome, get func(outcome) time.Duration) []time.Duration {
	out := make([]time.Duration, len(runs))
	for i, o := range runs {
		out[i] = get(o)
	}
	slices.Sort(out)
	return out
}

func durations(runs []outcome, get func(outcome) time.Duration) string {
	s := sorted(runs, get)
	return ms(benchkit.Percentile(s, 0.5)) + "/" + ms(benchkit.Percentile(s, 0.95)) + "/" + ms(s[len(s)-1])
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
