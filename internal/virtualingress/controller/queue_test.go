package controller

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestQueueFullCountsEveryUpdateRequestOfKyvernosNamespace: Kyverno's threshold counts every UpdateRequest whatever
// its state, and only those of its own namespace.
func TestQueueFullCountsEveryUpdateRequestOfKyvernosNamespace(t *testing.T) {
	requests := func(ns string, n int, state string) []client.Object {
		var out []client.Object
		for i := range n {
			ur := newUpdateRequest()
			ur.SetNamespace(ns)
			ur.SetName(fmt.Sprintf("ur-%s-%s-%d", ns, state, i))
			ur.Object["status"] = map[string]any{"state": state}
			out = append(out, ur)
		}
		return out
	}
	cases := []struct {
		name    string
		objects []client.Object
		want    bool
	}{
		{"below nine tenths", requests("kyverno", 89, "Pending"), false},
		{"nine tenths, whatever their state", append(requests("kyverno", 60, "Pending"), requests("kyverno", 30, "Completed")...), true},
		{"another namespace's do not count", append(requests("kyverno", 50, "Pending"), requests("elsewhere", 50, "Pending")...), false},
	}
	for _, c := range cases {
		cl := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(c.objects...).Build()
		r := &Reconciler{client: cl, opts: Options{KyvernoNamespace: "kyverno", UpdateRequestThreshold: 100}}
		got, err := r.queueFull(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: queueFull = %v, want %v", c.name, got, c.want)
		}
	}
}
