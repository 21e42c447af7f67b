package main

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// withStatus is a VirtualIngress with Resolved and Ready conditions of those statuses ("" leaves it out) and one
// backend resolved to service ("" for none).
func withStatus(name, resolved, ready, service string) *unstructured.Unstructured {
	vi := virtualingress.New("ns", name, virtualingress.CoderSpec(labelsFor(0)))
	var conditions []any
	for typ, status := range map[string]string{"Resolved": resolved, "Ready": ready} {
		if status != "" {
			conditions = append(conditions, map[string]any{"type": typ, "status": status, "reason": "R", "message": "",
				"lastTransitionTime": "2026-11-29T00:00:00Z"})
		}
	}
	status := map[string]any{"conditions": conditions}
	if service != "" {
		status["backends"] = []any{map[string]any{"field": "spec.rules[0].http.paths[0].backend", "service": service, "state": "Resolved"}}
	}
	vi.Object["status"] = status
	return vi
}

// A generateName or relabel case is done only when Ready names the Service that started matching: Ready on another
// Service (or Ready without a backend) is not it.
func TestReadyOnNamesTheService(t *testing.T) {
	for name, c := range map[string]struct {
		vi   *unstructured.Unstructured
		want bool
	}{
		"ready on it":         {withStatus("vi", "True", "True", "tenant-x"), true},
		"ready on another":    {withStatus("vi", "True", "True", "svc-old"), false},
		"resolved, not ready": {withStatus("vi", "True", "False", "tenant-x"), false},
		"no status":           {withStatus("vi", "", "", ""), false},
	} {
		if got := readyOn("tenant-x")(c.vi); got != c.want {
			t.Errorf("%s: readyOn = %v, want %v", name, got, c.want)
		}
	}
	if !isUnresolved(withStatus("vi", "False", "False", "")) || isUnresolved(withStatus("vi", "True", "False", "x")) || isUnresolved(withStatus("vi", "", "", "")) {
		t.Error("isUnresolved is true only of Resolved=False")
	}
}

// waitAll times each VirtualIngress by its first event that shows it done, and ignores the others' events and
// deletions.
func TestWaitAllTimesTheFirstDoneEventOfEach(t *testing.T) {
	fake := watch.NewFakeWithChanSize(10, false)
	vw := &virtualIngressWatch{w: fake}
	fake.Modify(withStatus("a", "True", "True", "s"))
	fake.Modify(withStatus("other", "True", "True", "s"))
	fake.Delete(withStatus("b", "True", "True", "s"))
	fake.Modify(withStatus("b", "False", "False", ""))
	seen, err := vw.waitAll([]string{"a", "b"}, "Ready", isReady, 50*time.Millisecond)
	if err == nil || len(seen) != 1 || seen["a"].IsZero() {
		t.Fatalf("waitAll = %v, %v; want a only, and the deadline's error", seen, err)
	}
	fake.Modify(withStatus("b", "True", "True", "s"))
	at, err := vw.waitFor("b", "Ready", isReady, time.Second)
	if err != nil || at.IsZero() {
		t.Errorf("waitFor(b) = %v, %v", at, err)
	}
}

// waitAllOf times each condition on its own: a VirtualIngress resolved long before it is Ready gets both times, and
// it waits until every condition is seen of every VirtualIngress.
func TestWaitAllOfTimesEachCondition(t *testing.T) {
	fake := watch.NewFakeWithChanSize(10, false)
	vw := &virtualIngressWatch{w: fake}
	conds := map[string]func(*unstructured.Unstructured) bool{"Resolved": isResolved, "Ready": isReady}
	fake.Modify(withStatus("a", "True", "False", "s"))
	seen, err := vw.waitAllOf([]string{"a"}, conds, 50*time.Millisecond)
	if err == nil || seen["Resolved"]["a"].IsZero() || !seen["Ready"]["a"].IsZero() {
		t.Fatalf("waitAllOf with a resolved, not Ready = %v, %v; want Resolved timed and the deadline's error", seen, err)
	}
	first := seen["Resolved"]["a"]
	time.Sleep(10 * time.Millisecond)
	fake.Modify(withStatus("a", "True", "True", "s"))
	seen, err = vw.waitAllOf([]string{"a"}, map[string]func(*unstructured.Unstructured) bool{"Ready": isReady}, time.Second)
	if err != nil || !seen["Ready"]["a"].After(first) {
		t.Errorf("waitAllOf(Ready) = %v, %v; want Ready after %s", seen, err, first)
	}
	if !isResolved(withStatus("vi", "True", "False", "x")) || isResolved(withStatus("vi", "False", "False", "")) {
		t.Error("isResolved is true only of Resolved=True")
	}
}
