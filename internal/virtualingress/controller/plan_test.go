package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// defaulted is opts with the defaults the flags would fill in.
func defaulted(t *testing.T, opts Options) Options {
	t.Helper()
	if err := opts.defaults(); err != nil {
		t.Fatal(err)
	}
	return opts
}

// newPlanReconciler is a Reconciler with nothing tracked yet: all that plan reads.
func newPlanReconciler(opts Options) *Reconciler {
	return &Reconciler{opts: opts, tracked: map[types.UID]*divergence{}}
}

func TestPlanWaitsOutTheGraceThenRepairsWithBackoff(t *testing.T) {
	opts := defaulted(t, Options{Grace: 5 * time.Second, RepairAfter: 30 * time.Second})
	r := newPlanReconciler(opts)
	missing := verdict{status: "False", reason: ReasonMissing, transient: true, repairable: true}
	start := time.Unix(0, 0)
	step := func(at time.Duration, pending bool) (bool, bool, time.Duration) {
		return r.plan(viUID, missing, pending, false, false, start.Add(at))
	}
	if report, repair, wait := step(0, false); report || repair || wait != 5*time.Second {
		t.Fatalf("at 0: report=%v repair=%v wait=%s, want a silent wait of the grace", report, repair, wait)
	}
	if report, repair, _ := step(6*time.Second, false); !report || repair {
		t.Fatalf("after the grace: report=%v repair=%v, want a report and no repair yet", report, repair)
	}
	if _, repair, _ := step(31*time.Second, true); repair {
		t.Fatal("repaired while Kyverno still held a request")
	}
	if _, repair, wait := step(31*time.Second, false); !repair || wait != 60*time.Second {
		t.Fatalf("after RepairAfter: repair=%v wait=%s, want a repair and a doubled wait", repair, wait)
	}
	if _, repair, _ := step(61*time.Second, false); repair {
		t.Fatal("repaired again before the back-off ran out")
	}
	if _, repair, _ := step(92*time.Second, false); !repair {
		t.Fatal("no second repair after the back-off")
	}
	ok := verdict{status: "True", reason: ReasonUpToDate}
	if report, repair, _ := r.plan(viUID, ok, false, false, false, start.Add(100*time.Second)); !report || repair || len(r.tracked) != 0 {
		t.Fatalf("a healthy verdict: report=%v repair=%v tracked=%d", report, repair, len(r.tracked))
	}
}

func TestPlanReportsLastingVerdictsAtOnce(t *testing.T) {
	r := newPlanReconciler(Options{Grace: time.Minute, RepairAfter: time.Minute, MaxRepairBackoff: time.Hour})
	taken := verdict{status: "False", reason: ReasonNameTaken}
	if report, repair, _ := r.plan(viUID, taken, false, false, false, time.Unix(0, 0)); !report || repair {
		t.Fatalf("name taken: report=%v repair=%v, want an immediate report and no repair", report, repair)
	}
}

func TestPlanHoldsRepairsWhileKyvernosQueueIsFull(t *testing.T) {
	opts := defaulted(t, Options{Grace: 5 * time.Second, RepairAfter: 30 * time.Second})
	r := newPlanReconciler(opts)
	outdated := verdict{status: "False", reason: ReasonOutOfDate, transient: true, repairable: true}
	start := time.Unix(0, 0)
	r.plan(viUID, outdated, false, false, false, start)
	if _, repair, wait := r.plan(viUID, outdated, false, false, true, start.Add(31*time.Second)); repair || wait != opts.Grace {
		t.Fatalf("queue full: repair=%v wait=%s, want no repair and a look again after the grace", repair, wait)
	}
	if _, repair, _ := r.plan(viUID, outdated, false, false, true, start.Add(300*time.Second)); repair {
		t.Fatal("repaired while the queue was still full")
	}
	// Room again: the held repair goes at once, as the first one (the back-off did not grow while it waited).
	if _, repair, wait := r.plan(viUID, outdated, false, false, false, start.Add(301*time.Second)); !repair || wait != 60*time.Second {
		t.Fatalf("room again: repair=%v wait=%s, want a first repair and the first doubled wait", repair, wait)
	}
}

func TestPlanWaitsForKyvernoBeforeTheFirstReport(t *testing.T) {
	opts := defaulted(t, Options{Grace: 5 * time.Second, PendingGrace: time.Minute})
	missing := verdict{status: "False", reason: ReasonMissing, transient: true, repairable: true}
	start := time.Unix(0, 0)
	r := newPlanReconciler(opts)
	r.plan(viUID, missing, true, true, false, start)
	if report, _, wait := r.plan(viUID, missing, true, true, false, start.Add(6*time.Second)); report || wait != 54*time.Second {
		t.Fatalf("queued, past the grace: report=%v wait=%s, want a silent wait until PendingGrace", report, wait)
	}
	if report, _, _ := r.plan(viUID, missing, true, true, false, start.Add(61*time.Second)); !report {
		t.Fatal("queued past PendingGrace: no report")
	}
	// Kyverno done with it (or dropped it) and the Ingress still missing: the usual grace, from the first sighting.
	r = newPlanReconciler(opts)
	r.plan(viUID, missing, true, true, false, start)
	if report, _, _ := r.plan(viUID, missing, false, false, false, start.Add(6*time.Second)); !report {
		t.Fatal("nothing pending any more, past the grace: no report")
	}
	// Reported before (a spec change of a Ready VirtualIngress): pending no longer holds the report back.
	r = newPlanReconciler(opts)
	r.plan(viUID, missing, true, false, false, start)
	if report, repair, _ := r.plan(viUID, missing, true, false, false, start.Add(6*time.Second)); !report || repair {
		t.Fatalf("reported before, pending: report=%v repair=%v, want a report after the grace and no repair", report, repair)
	}
	// A lasting verdict is reported at once, queued or not.
	taken := verdict{status: "False", reason: ReasonNameTaken}
	if report, _, _ := r.plan(types.UID("other"), taken, true, true, false, start); !report {
		t.Fatal("name taken while queued: no report")
	}
}

func TestPlanRepairsALaggingResolutionAfterLagRepairAfter(t *testing.T) {
	opts := defaulted(t, Options{Grace: 5 * time.Second, RepairAfter: 30 * time.Second, LagRepairAfter: time.Second})
	r := newPlanReconciler(opts)
	lag := verdict{status: "False", reason: ReasonResolutionOutOfDate, transient: true, repairable: true, urgent: true}
	start := time.Unix(0, 0)
	if report, repair, wait := r.plan(viUID, lag, false, false, false, start); report || repair || wait != time.Second {
		t.Fatalf("at 0: report=%v repair=%v wait=%s, want a silent wait of LagRepairAfter", report, repair, wait)
	}
	if _, repair, _ := r.plan(viUID, lag, true, false, false, start.Add(time.Second)); repair {
		t.Fatal("repaired while Kyverno still held a request")
	}
	report, repair, wait := r.plan(viUID, lag, false, false, false, start.Add(time.Second))
	if report || !repair || wait != 30*time.Second {
		t.Fatalf("after LagRepairAfter: report=%v repair=%v wait=%s, want a repair before the report and RepairAfter (the quick try does not double it)", report, repair, wait)
	}
	// Kyverno dropped it: the next repair comes RepairAfter later, then the back-off doubles as usual.
	if _, repair, _ := r.plan(viUID, lag, false, false, false, start.Add(30*time.Second)); repair {
		t.Fatal("repaired again before RepairAfter")
	}
	if _, repair, wait := r.plan(viUID, lag, false, false, false, start.Add(31*time.Second)); !repair || wait != 60*time.Second {
		t.Fatalf("RepairAfter after the quick try: repair=%v wait=%s, want a second repair and a doubled wait", repair, wait)
	}
	missing := verdict{status: "False", reason: ReasonMissing, transient: true, repairable: true}
	r.forget(viUID)
	if _, repair, _ := r.plan(viUID, missing, false, false, false, start.Add(2*time.Second)); repair {
		t.Fatal("a missing Ingress that is not awaited first repaired at once")
	}
	// A Service that went away (every one of a namespace being deleted) waits for RepairAfter.
	gone := verdict{status: "False", reason: ReasonResolutionOutOfDate, transient: true, repairable: true}
	r.forget(viUID)
	if _, repair, wait := r.plan(viUID, gone, false, false, false, start); repair || wait != opts.Grace {
		t.Fatalf("lag toward no Service at 0: repair=%v wait=%s, want the grace's wait", repair, wait)
	}
	if _, repair, _ := r.plan(viUID, gone, false, false, false, start.Add(2*time.Second)); repair {
		t.Fatal("lag toward no Service repaired after LagRepairAfter; only one toward a Service that appeared is")
	}
}

// A lag toward a Service created with generateName, whose event Kyverno drops, is repaired at the first reconcile:
// waiting LagRepairAfter would only delay it; Kyverno holding a request still defers it.
func TestPlanRepairsALagKyvernoNeverFollowsAtOnce(t *testing.T) {
	opts := defaulted(t, Options{Grace: 5 * time.Second, RepairAfter: 30 * time.Second, LagRepairAfter: time.Second})
	r := newPlanReconciler(opts)
	lag := verdict{status: "False", reason: ReasonResolutionOutOfDate, transient: true, repairable: true, urgent: true, now: true}
	start := time.Unix(0, 0)
	if _, repair, _ := r.plan(viUID, lag, true, false, false, start); repair {
		t.Fatal("repaired while Kyverno still held a request")
	}
	if report, repair, _ := r.plan(viUID, lag, false, false, false, start); report || !repair {
		t.Fatalf("at 0: report=%v repair=%v, want a repair at once, before any report", report, repair)
	}
}

// decide repairs a lag at once only toward a Service Kyverno never follows.
func TestDecideLagNowOnlyWhenUnfollowed(t *testing.T) {
	for _, unfollowed := range []bool{true, false} {
		v := decide(inputs{kind: virtualIngressKind, vi: resolvedView("True", "Resolved"), uid: viUID, generated: ingress(viUID, "svc-a"),
			lag: "spec.defaultBackend is Resolved (svc-a), the Services make it Resolved (svc-b)", lagFound: true, lagUnfollowed: unfollowed})
		if v.now != unfollowed || !v.urgent {
			t.Errorf("lagUnfollowed=%v: verdict %+v, want urgent with now=%v", unfollowed, v, unfollowed)
		}
	}
}

// decide makes a lag urgent only when the Services give the backend a Service its status lacks.
func TestDecideLagUrgentOnlyTowardAService(t *testing.T) {
	for _, found := range []bool{true, false} {
		v := decide(inputs{kind: virtualIngressKind, vi: resolvedView("True", "Resolved"), uid: viUID, generated: ingress(viUID, "svc-a"),
			lag: "spec.defaultBackend is Resolved (svc-a), the Services make it Resolved (svc-b)", lagFound: found})
		if v.reason != ReasonResolutionOutOfDate || v.urgent != found {
			t.Errorf("lagFound=%v: verdict %+v, want ResolutionOutOfDate with urgent=%v", found, v, found)
		}
	}
}

// decide marks a missing Ingress as a first one only while the source waits for its first: a generation Kyverno
// lost, not an Ingress that went away after it was reported on (a namespace being deleted takes them all).
func TestDecideMissingFirstOnlyBeforeAnyReportOnIt(t *testing.T) {
	withReady := func(status metav1.ConditionStatus, reason string) *view {
		v := resolvedView("True", "Resolved")
		if reason != "" {
			v.conditions = append(v.conditions, v1alpha1.Condition{Type: ConditionReady, Status: status, Reason: reason})
		}
		return v
	}
	cases := []struct {
		name  string
		vi    *view
		first bool
	}{
		{"never reported on", withReady("", ""), true},
		{"reported unresolved before its Service", withReady("False", ReasonUnresolved), true},
		{"reported up to date before", withReady("True", ReasonUpToDate), false},
		{"reported missing before this controller started", withReady("False", ReasonMissing), false},
		{"reported stale (its Service went away)", withReady("False", "Stale"), false},
	}
	for _, c := range cases {
		v := decide(inputs{kind: virtualIngressKind, vi: c.vi, uid: viUID})
		if v.reason != ReasonMissing || v.first != c.first || v.urgent {
			t.Errorf("%s: verdict %s first=%v urgent=%v, want %s first=%v, not urgent", c.name, v.reason, v.first, v.urgent,
				ReasonMissing, c.first)
		}
	}
}

// A missing first Ingress is repaired with its report, once the grace is over, and the divergence stays a first
// one after that report (which changes the Ready condition the verdict reads).
func TestPlanRepairsAMissingFirstIngressWithItsReport(t *testing.T) {
	opts := defaulted(t, Options{Grace: 5 * time.Second, RepairAfter: 30 * time.Second, LagRepairAfter: time.Second})
	r := newPlanReconciler(opts)
	first := verdict{status: "False", reason: ReasonMissing, transient: true, repairable: true, first: true}
	reported := first
	reported.first = false
	start := time.Unix(0, 0)
	if report, repair, wait := r.plan(viUID, first, false, false, false, start); report || repair || wait != 5*time.Second {
		t.Fatalf("at 0: report=%v repair=%v wait=%s, want a silent wait of the grace", report, repair, wait)
	}
	if _, repair, _ := r.plan(viUID, first, false, false, false, start.Add(2*time.Second)); repair {
		t.Fatal("repaired after LagRepairAfter, before the grace: Kyverno may not have made its request yet")
	}
	if report, repair, _ := r.plan(viUID, first, false, false, false, start.Add(5*time.Second)); !report || !repair {
		t.Fatalf("after the grace: report=%v repair=%v, want both in one write", report, repair)
	}
	// Reported and repaired; the next repair follows the usual back-off even though the verdict no longer says first.
	if _, repair, _ := r.plan(viUID, reported, false, false, false, start.Add(6*time.Second)); repair {
		t.Fatal("repaired again before the back-off ran out")
	}
	r.forget(viUID)
	r.plan(viUID, first, false, false, false, start)
	if _, repair, _ := r.plan(viUID, reported, false, false, false, start.Add(5*time.Second)); !repair {
		t.Fatal("no repair after the grace once the missing first Ingress was reported")
	}
}
