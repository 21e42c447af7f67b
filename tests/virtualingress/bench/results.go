package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	benchkit "github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// results is what the JSON file holds: one engineResults per policy engine, keyed by engine name.
type results struct {
	Machine map[string]string `json:"machine"`
	Floor   *floorResult      `json:"floor,omitempty"`
	// SizedFloor is the floor with triggers of a VirtualIngress's size (--sized-floor).
	SizedFloor *floorResult `json:"sizedFloor,omitempty"`
	// GitOpsFloor is the floor of the GitOps apply (with --gitops): the same burst on the floor's bare rule.
	GitOpsFloor *gitopsFloorResult        `json:"gitopsFloor,omitempty"`
	Order       []string                  `json:"engineOrder"`
	Engines     map[string]*engineResults `json:"engines"`
}

// engineResults are the figures of one policy engine. A measurement that failed has its error in Error (and its
// figures zero); the other measurements of the engine still ran.
type engineResults struct {
	// PoliciesReadySeconds is the time from `helm install` starting until Kyverno reported every policy ready.
	PoliciesReadySeconds float64  `json:"policiesReadySeconds"`
	WallSeconds          float64  `json:"wallSeconds"`
	Create               *latency `json:"createToIngress,omitempty"`
	Recreate             *latency `json:"serviceRecreateToIngressUpdated,omitempty"`
	// GitOps is a Service and its VirtualIngress applied together to Ready; GitOpsLate counts those past 5 s.
	GitOps     *latency `json:"gitopsApplyToReady,omitempty"`
	GitOpsLate int      `json:"gitopsReadyLaterThan5s"`
	// GitOpsResolved and GitOpsIngress time the same pairs to Resolved=True and to their Ingress routing to the
	// Service (what the GitOps floor is timed to); GitOpsUnresolvedLate and GitOpsIngressLate count those past 5 s.
	GitOpsResolved       *latency `json:"gitopsApplyToResolved,omitempty"`
	GitOpsUnresolvedLate int      `json:"gitopsUnresolvedLaterThan5s"`
	GitOpsIngress        *latency `json:"gitopsApplyToIngress,omitempty"`
	GitOpsIngressLate    int      `json:"gitopsIngressLaterThan5s"`
	// GitOpsFloorRatio is GitOps's p95 over the GitOps floor's (the same run's burst on Kyverno's bare rule), and
	// GitOpsIngressFloorRatio GitOpsIngress's; no target: they say how much of the p95 is Kyverno's own.
	GitOpsFloorRatio        float64 `json:"gitopsP95RatioToFloor,omitempty"`
	GitOpsIngressFloorRatio float64 `json:"gitopsIngressP95RatioToFloor,omitempty"`
	// GenerateName and Relabel are a Service starting to match a VirtualIngress that waits for it, one at a time
	// (with --gitops-cases): created with generateName, or an existing one relabelled, to Ready on it.
	GenerateName *latency `json:"generateNameToReady,omitempty"`
	Relabel      *latency `json:"relabelToReady,omitempty"`
	// RouteCreate and RouteRecreate are the same for VirtualHTTPRoutes and their HTTPRoutes (with --routes).
	RouteCreate   *latency `json:"createToHTTPRoute,omitempty"`
	RouteRecreate *latency `json:"serviceRecreateToHTTPRouteUpdated,omitempty"`
	Scale         *scale   `json:"scale,omitempty"`
	// Restarts is what a background controller restart and a helm upgrade cost (with --restart).
	Restarts *restarts `json:"restarts,omitempty"`
	// Error is set when the engine could not be installed or cleaned up after.
	Error string `json:"error,omitempty"`
}

// latency summarises samples in milliseconds.
type latency struct {
	Samples int     `json:"samples"`
	P50     float64 `json:"p50Ms"`
	P95     float64 `json:"p95Ms"`
	Max     float64 `json:"maxMs"`
	Target  float64 `json:"targetP95Ms"`
	Error   string  `json:"error,omitempty"`
}

type scale struct {
	VirtualIngresses   int     `json:"virtualIngresses"`
	CreateSeconds      float64 `json:"createAllSeconds"`
	ConvergeSeconds    float64 `json:"convergeSeconds"`
	Resolved           int     `json:"resolved"`
	LostUpdateRequests int     `json:"lostUpdateRequests"`
	SkippedByThreshold int     `json:"updateRequestsSkippedByThreshold"`
	FailedToCreate     int     `json:"updateRequestsFailedToCreate"`
	// PeakUpdateRequests is the most UpdateRequests that existed at once: what Kyverno's threshold counts.
	PeakUpdateRequests int `json:"peakUpdateRequests"`
	// Usage is what the control plane spent from the first create until all were resolved.
	Usage            *usage `json:"usage,omitempty"`
	BurstRecreations int    `json:"burstServiceRecreations"`
	BurstFollowed    int    `json:"burstIngressesFollowed"`
	// BurstRecreateSeconds is how long the API server took to accept the burst's deletions and creations.
	BurstRecreateSeconds float64 `json:"burstRecreateSeconds"`
	// BurstConvergeSeconds runs from the burst's start to the last Ingress that followed when all did, else to the
	// end of the wait.
	BurstConvergeSeconds float64 `json:"burstConvergeSeconds"`
	// RightAtEnd counts the Ingresses routing to their Service's current name once both phases are over.
	RightAtEnd int `json:"ingressesRightAtEnd"`
	// KyvernoRestarts counts the restarts of Kyverno's controllers during the run (see supervisor).
	KyvernoRestarts map[string]int `json:"kyvernoRestarts,omitempty"`
	// FloorRatio is ConvergeSeconds over the floor's (the same run's context-free generate policy).
	FloorRatio float64 `json:"convergeRatioToFloor,omitempty"`
	// FloorRatioUpperBound: the floor did less than the whole job (Kyverno dropped some of its requests), so its time
	// is a lower bound and FloorRatio an upper bound.
	FloorRatioUpperBound bool `json:"convergeRatioToFloorIsUpperBound,omitempty"`
	// SizedFloorRatio is ConvergeSeconds over the sized floor's; not a target, it shows how much of FloorRatio is the
	// size of what Kyverno lists.
	SizedFloorRatio           float64 `json:"convergeRatioToSizedFloor,omitempty"`
	SizedFloorRatioUpperBound bool    `json:"convergeRatioToSizedFloorIsUpperBound,omitempty"`
	// ObjectBytes is a VirtualIngress's mean size as the API server lists it, once all are resolved.
	ObjectBytes          int     `json:"virtualIngressBytes"`
	BackgroundPeakMemMiB float64 `json:"backgroundControllerPeakMemoryMiB"`
	AdmissionPeakMemMiB  float64 `json:"admissionControllerPeakMemoryMiB"`
	TargetSeconds        float64 `json:"targetConvergeSeconds"`
	Error                string  `json:"error,omitempty"`
}

func summarise(samples []time.Duration, target time.Duration) *latency {
	l := &latency{Samples: len(samples), Target: float64(target.Milliseconds())}
	if len(samples) == 0 {
		return l
	}
	s := slices.Sorted(slices.Values(samples))
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	l.P50, l.P95, l.Max = ms(benchkit.Percentile(s, 0.50)), ms(benchkit.Percentile(s, 0.95)), ms(s[len(s)-1])
	return l
}

// machine describes where the figures come from; the component versions are the ones the devcluster built.
func machine(v repo.Versions) map[string]string {
	return map[string]string{
		"go":         runtime.Version(),
		"cpus":       fmt.Sprint(runtime.NumCPU()),
		"kubernetes": v.Kubernetes + " (kube-apiserver, etcd " + v.Etcd + ", kube-controller-manager as local processes)",
		"kyverno":    v.Kyverno + " (admission and background controllers as local processes, " + strings.Join(kyvernoArgs, " ") + ")",
		"date":       time.Now().UTC().Format(time.RFC3339),
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// row is one line of the side-by-side table: a measurement, and how to show it for one engine ("" when the engine
// has no such figure).
type row struct {
	name string
	cell func(*engineResults) string
}

func latencyRows(name string, get func(*engineResults) *latency, target time.Duration) []row {
	cell := func(f func(*latency) string) func(*engineResults) string {
		return func(r *engineResults) string {
			l := get(r)
			switch {
			case l == nil:
				return "-"
			case l.Error != "":
				return "FAILED"
			}
			return f(l)
		}
	}
	return []row{
		{name + ": samples", func(r *engineResults) string {
			if l := get(r); l != nil && l.Error != "" {
				return fmt.Sprintf("%d, then FAILED", l.Samples)
			}
			return cell(func(l *latency) string { return fmt.Sprint(l.Samples) })(r)
		}},
		{name + ": p50", cell(func(l *latency) string { return fmt.Sprintf("%.0f ms", l.P50) })},
		{fmt.Sprintf("%s: p95 (target <= %d ms)", name, target.Milliseconds()), cell(func(l *latency) string {
			return fmt.Sprintf("%.0f ms %s", l.P95, verdict(l.P95 <= l.Target))
		})},
		{name + ": max", cell(func(l *latency) string { return fmt.Sprintf("%.0f ms", l.Max) })},
	}
}

// floorRatioTarget is how much slower than Kyverno's own generate (the floor) the scale run may converge.
const floorRatioTarget = 1.5

func scaleRows(burst int) []row {
	cell := func(f func(*scale) string) func(*engineResults) string {
		return func(r *engineResults) string {
			switch {
			case r.Scale == nil:
				return "-"
			case r.Scale.Error != "":
				return "FAILED"
			}
			return f(r.Scale)
		}
	}
	return []row{
		{"scale: VirtualIngresses / Services, one namespace", cell(func(s *scale) string {
			return fmt.Sprintf("%d / %d", s.VirtualIngresses, s.VirtualIngresses)
		})},
		{"scale: time to create all VirtualIngresses (admission)", cell(func(s *scale) string { return fmt.Sprintf("%.1f s", s.CreateSeconds) })},
		{fmt.Sprintf("scale: time until all resolved (target <= %.0f s)", scaleTarget.Seconds()), cell(func(s *scale) string {
			return fmt.Sprintf("%.1f s %s", s.ConvergeSeconds, verdict(s.Resolved == s.VirtualIngresses && s.ConvergeSeconds <= s.TargetSeconds))
		})},
		{fmt.Sprintf("scale: converge time / floor's (target <= %.1f)", floorRatioTarget), cell(func(s *scale) string {
			if s.FloorRatio == 0 {
				return "-"
			}
			if s.FloorRatioUpperBound {
				if s.FloorRatio <= floorRatioTarget {
					return fmt.Sprintf("<= %.2f met", s.FloorRatio)
				}
				return fmt.Sprintf("<= %.2f unproven", s.FloorRatio)
			}
			return fmt.Sprintf("%.2f %s", s.FloorRatio, verdict(s.FloorRatio <= floorRatioTarget))
		})},
		{"scale: converge time / sized floor's (triggers the size of a VirtualIngress; no target)", cell(func(s *scale) string {
			switch {
			case s.SizedFloorRatio == 0:
				return "-"
			case s.SizedFloorRatioUpperBound:
				return fmt.Sprintf("<= %.2f", s.SizedFloorRatio)
			}
			return fmt.Sprintf("%.2f", s.SizedFloorRatio)
		})},
		{"scale: bytes per VirtualIngress as listed", cell(func(s *scale) string { return fmt.Sprint(s.ObjectBytes) })},
		{"scale: resolved / lost (target: lost = 0)", cell(func(s *scale) string {
			return fmt.Sprintf("%d / %d %s", s.Resolved, s.LostUpdateRequests, verdict(s.LostUpdateRequests == 0))
		})},
		{"scale: UpdateRequests skipped by threshold / failed to create / peak existing", cell(func(s *scale) string {
			return fmt.Sprintf("%d / %d / %d", s.SkippedByThreshold, s.FailedToCreate, s.PeakUpdateRequests)
		})},
		{"scale: API requests per VirtualIngress (all clients)", cell(func(s *scale) string {
			if s.Usage == nil {
				return "-"
			}
			return fmt.Sprintf("%.1f", s.Usage.RequestsPerTrigger)
		})},
		{"scale: CPU seconds until all resolved: API server / etcd / Kyverno admission / background / bench", cell(func(s *scale) string {
			return s.Usage.cpu()
		})},
		{fmt.Sprintf("scale: burst of %d Service recreations: accepted by the API server in", burst), cell(func(s *scale) string {
			return fmt.Sprintf("%.1f s", s.BurstRecreateSeconds)
		})},
		{fmt.Sprintf("scale: burst of %d Service recreations: Ingresses followed / time (target: all)", burst), cell(func(s *scale) string {
			if s.BurstRecreations == 0 {
				return "-"
			}
			if s.BurstFollowed < s.BurstRecreations {
				return fmt.Sprintf("%d / %.1f s (wait ended) MISSED", s.BurstFollowed, s.BurstConvergeSeconds)
			}
			return fmt.Sprintf("%d / %.1f s met", s.BurstFollowed, s.BurstConvergeSeconds)
		})},
		{"scale: Ingresses right at the end (target: all)", cell(func(s *scale) string {
			return fmt.Sprintf("%d / %d %s", s.RightAtEnd, s.VirtualIngresses, verdict(s.RightAtEnd == s.VirtualIngresses))
		})},
		{"scale: Kyverno controllers restarted (lost their lease under load)", cell(func(s *scale) string { return fmt.Sprint(sum(s.KyvernoRestarts)) })},
		{"scale: peak memory background / admission controller", cell(func(s *scale) string {
			return fmt.Sprintf("%.0f / %.0f MiB", s.BackgroundPeakMemMiB, s.AdmissionPeakMemMiB)
		})},
	}
}

// print writes one row per measurement and one column per engine, then the errors of failed measurements.
func (r results) print(out io.Writer, burst int) {
	seconds := func(format string, get func(*engineResults) float64) func(*engineResults) string {
		return func(e *engineResults) string {
			if get(e) == 0 { // not run, or failed before
				return "-"
			}
			return fmt.Sprintf(format, get(e))
		}
	}
	rows := []row{{"policies ready after helm install", seconds("%.1f s", func(e *engineResults) float64 { return e.PoliciesReadySeconds })}}
	rows = append(rows, latencyRows("create -> Ingress", func(e *engineResults) *latency { return e.Create }, createTarget)...)
	rows = append(rows, latencyRows("Service recreate -> Ingress updated", func(e *engineResults) *latency { return e.Recreate }, recreateTarget)...)
	rows = append(rows, latencyRows("GitOps apply (Service + VirtualIngress) -> Resolved", func(e *engineResults) *latency { return e.GitOpsResolved }, gitopsTarget)...)
	rows = append(rows, latencyRows("GitOps apply (Service + VirtualIngress) -> Ingress", func(e *engineResults) *latency { return e.GitOpsIngress }, gitopsTarget)...)
	rows = append(rows, latencyRows("GitOps apply (Service + VirtualIngress) -> Ready", func(e *engineResults) *latency { return e.GitOps }, gitopsTarget)...)
	gitopsCount := func(get func(*engineResults) int, target bool) func(*engineResults) string {
		return func(e *engineResults) string {
			if e.GitOps == nil || e.GitOps.Error != "" {
				return "-"
			}
			if !target {
				return strconv.Itoa(get(e))
			}
			return fmt.Sprintf("%d %s", get(e), verdict(get(e) == 0))
		}
	}
	rows = append(rows,
		row{"GitOps apply: still Unresolved after 5 s (target 0)", gitopsCount(func(e *engineResults) int { return e.GitOpsUnresolvedLate }, true)},
		row{"GitOps apply: no Ingress within 5 s (no target)", gitopsCount(func(e *engineResults) int { return e.GitOpsIngressLate }, false)},
		row{"GitOps apply: not Ready within 5 s (no target)", gitopsCount(func(e *engineResults) int { return e.GitOpsLate }, false)})
	if r.GitOpsFloor != nil {
		// The floor's figures are in the rows' names, beside the engines' figures they compare with.
		ratio := func(what string, get func(*engineResults) float64) row {
			return row{"GitOps apply: " + what + " p95 / the GitOps floor's p95 (no target; floor: " + r.GitOpsFloor.summary() + ")", func(e *engineResults) string {
				if get(e) == 0 {
					return "-"
				}
				return fmt.Sprintf("%.1f", get(e))
			}}
		}
		rows = append(rows, ratio("Ingress", func(e *engineResults) float64 { return e.GitOpsIngressFloorRatio }),
			ratio("Ready", func(e *engineResults) float64 { return e.GitOpsFloorRatio }))
	}
	rows = append(rows, latencyRows("Service created with generateName, one at a time -> Ready", func(e *engineResults) *latency { return e.GenerateName }, matchTarget)...)
	rows = append(rows, latencyRows("existing Service relabelled to match, one at a time -> Ready", func(e *engineResults) *latency { return e.Relabel }, matchTarget)...)
	rows = append(rows, latencyRows("create -> HTTPRoute", func(e *engineResults) *latency { return e.RouteCreate }, createTarget)...)
	rows = append(rows, latencyRows("Service recreate -> HTTPRoute updated", func(e *engineResults) *latency { return e.RouteRecreate }, recreateTarget)...)
	for _, e := range r.Engines {
		if e.Scale != nil {
			rows = append(rows, scaleRows(burst)...)
			break
		}
	}
	for _, e := range r.Engines {
		if e.Restarts != nil {
			rows = append(rows, restartRows()...)
			break
		}
	}
	rows = append(rows, row{"wall time of the engine's run", seconds("%.0f s", func(e *engineResults) float64 { return e.WallSeconds })})

	for _, f := range []*floorResult{r.Floor, r.SizedFloor} {
		if f == nil {
			continue
		}
		what := "one context-free generate ClusterPolicy"
		if f.Sized {
			what += ", each trigger carrying a VirtualIngress's spec and status"
		}
		fmt.Fprintf(out, "\n%s (%s, %d triggers of %d bytes over %d Services in one namespace): created in %.1f s, %d Ingresses in %.1f s (UpdateRequests Kyverno dropped, never repaired: %d by its threshold, %d failed to create, %d failed for good), Kyverno restarted %d times\n",
			f.name(), what, f.Triggers, f.TriggerBytes, f.Triggers, f.CreateSeconds, f.Generated, f.ConvergeSeconds, f.SkippedByThreshold, f.FailedToCreate, f.GaveUp, sum(f.KyvernoRestarts))
		if f.GaveUpMessage != "" {
			fmt.Fprintf(out, "one failed for good: %s\n", f.GaveUpMessage)
		}
		if f.Generated < f.Triggers && f.Error == "" {
			fmt.Fprintf(out, "the %s did less than the whole job: its time is a lower bound, and the ratios to it upper bounds (shown as <=)\n", f.name())
		}
		switch {
		case f.Restart != nil:
			fmt.Fprintf(out, "%s after a background controller restart (%d Ingresses re-synced by Kyverno at its start): triggers re-pointed at once -> Ingresses followed: %s; Kyverno's queue drained after %.1f s, peak %d UpdateRequests\n",
				f.name(), f.Generated, f.Restart.followed(), f.Restart.DrainSeconds, f.Restart.PeakUpdateRequests)
		case f.RestartError != "":
			fmt.Fprintf(out, "%s after a background controller restart: FAILED: %s\n", f.name(), f.RestartError)
		}
	}
	if f := r.GitOpsFloor; f != nil {
		fmt.Fprintf(out, "\nGitOps floor (one context-free generate ClusterPolicy; %d triggers and %d Services applied at once as the GitOps pairs, each timed from its first apply to its Ingress on a watch): %s, Kyverno restarted %d times\n",
			f.Pairs, f.Pairs, f.summary(), sum(f.KyvernoRestarts))
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "\nmeasurement\t"+strings.Join(r.Order, "\t"))
	for _, rw := range rows {
		cells := []string{rw.name}
		for _, name := range r.Order {
			cells = append(cells, rw.cell(r.Engines[name]))
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	_ = w.Flush()
	for _, f := range []*floorResult{r.Floor, r.SizedFloor} {
		if f != nil && f.Usage != nil {
			fmt.Fprintf(out, "%s: CPU seconds (as above) %s; API requests per trigger: %s\n", f.name(), f.Usage.cpu(), f.Usage.requests())
		}
	}
	for _, name := range r.Order {
		if s := r.Engines[name].Scale; s != nil && s.Usage != nil {
			fmt.Fprintf(out, "%s: API requests per VirtualIngress: %s\n", name, s.Usage.requests())
		}
	}
	for _, name := range r.Order {
		for _, err := range r.Engines[name].errors() {
			fmt.Fprintf(out, "%s: %s\n", name, err)
		}
	}
}

// errors lists what failed in an engine's run.
func (e *engineResults) errors() []string {
	var errs []string
	if e.Error != "" {
		errs = append(errs, e.Error)
	}
	if e.Create != nil && e.Create.Error != "" {
		errs = append(errs, "create latency: "+e.Create.Error)
	}
	if e.Recreate != nil && e.Recreate.Error != "" {
		errs = append(errs, "recreate latency: "+e.Recreate.Error)
	}
	if e.GitOps != nil && e.GitOps.Error != "" {
		errs = append(errs, "GitOps apply: "+e.GitOps.Error)
	}
	if e.GenerateName != nil && e.GenerateName.Error != "" {
		errs = append(errs, "generateName: "+e.GenerateName.Error)
	}
	if e.Relabel != nil && e.Relabel.Error != "" {
		errs = append(errs, "relabel: "+e.Relabel.Error)
	}
	if e.Restarts != nil && e.Restarts.Error != "" {
		errs = append(errs, "restart: "+e.Restarts.Error)
	}
	if e.Scale != nil && e.Scale.Error != "" {
		errs = append(errs, "scale: "+e.Scale.Error)
	}
	if s := e.Scale; s != nil && s.Error == "" && s.RightAtEnd < s.VirtualIngresses {
		errs = append(errs, fmt.Sprintf("scale: %d of %d Ingresses do not route to their Service at the end", s.VirtualIngresses-s.RightAtEnd, s.VirtualIngresses))
	}
	return errs
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// followed is how soon the changes made right after the event were followed, against restartFollowTarget.
func (res *restartResult) followed() string {
	return fmt.Sprintf("%d: %.0f / %.0f / %.0f ms, %d within %s %s", res.Recreated, res.FollowP50Ms, res.FollowP95Ms, res.FollowMs,
		res.Within5s, restartFollowTarget, verdict(res.Within5s == res.Recreated))
}

// restartRows show, with no event before (the baseline), after the background controller's restart and after the
// chart's upgrade, the VirtualIngresses written (target 0) and how soon the Services recreated at once right after were
// followed (target: all within restartFollowTarget).
func restartRows() []row {
	cell := func(f func(*restarts) string) func(*engineResults) string {
		return func(r *engineResults) string {
			switch {
			case r.Restarts == nil:
				return "-"
			case r.Restarts.Error != "":
				return "FAILED"
			}
			return f(r.Restarts)
		}
	}
	var rows []row
	for _, ev := range []struct {
		name string
		get  func(*restarts) *restartResult
	}{
		{"no event (baseline)", func(r *restarts) *restartResult { return r.Quiet }},
		{"background controller restart", func(r *restarts) *restartResult { return r.Restart }},
		{"helm upgrade rewriting every policy", func(r *restarts) *restartResult { return r.Upgrade }},
	} {
		rows = append(rows,
			row{"restart: " + ev.name + ": VirtualIngresses / Services present", cell(func(r *restarts) string {
				return fmt.Sprintf("%d / %d", r.VirtualIngresses, r.Services)
			})},
			row{"restart: " + ev.name + ": VirtualIngresses written (target 0)", cell(func(r *restarts) string {
				return fmt.Sprintf("%d %s", ev.get(r).Written, verdict(ev.get(r).Written == 0))
			})},
			row{fmt.Sprintf("restart: %s: Services recreated at once after it -> Ingresses followed: p50 / p95 / all (target all <= %s)", ev.name, restartFollowTarget), cell(func(r *restarts) string {
				return ev.get(r).followed()
			})},
			row{"restart: " + ev.name + ": took / Kyverno's queue drained after / peak UpdateRequests", cell(func(r *restarts) string {
				res := ev.get(r)
				drained := fmt.Sprintf("%.1f s", res.DrainSeconds)
				if res.PendingAtEnd > 0 {
					drained = fmt.Sprintf("not after %.0f s (%d pending)", res.DrainSeconds, res.PendingAtEnd)
				}
				return fmt.Sprintf("%.1f s / %s / %d", res.Seconds, drained, res.PeakUpdateRequests)
			})},
		)
	}
	return rows
}
