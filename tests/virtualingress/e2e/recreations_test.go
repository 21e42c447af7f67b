//go:build e2e

package e2e

import (
	"context"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// testRapidRecreations recreates the Service under a new name many times, first waiting for the Ingress after each,
// then back to back. The resolve policy reads Services from Kyverno's informer, which lags behind the API server: an
// Ingress resolved from a cache that had not seen the latest change would point at a deleted name again. Every name
// the Ingress shows must be at least as new as the one it showed before, and it must end on the last one.
func testRapidRecreations(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-rapid")
	current, ing := resolvedCoder(t, ns)
	generation := map[string]int{current: 0}

	w, err := env.kube.NetworkingV1().Ingresses(ns).Watch(context.Background(), metav1.ListOptions{
		FieldSelector: "metadata.name=" + virtualingress.GeneratedName("coder"), ResourceVersion: ing.ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var seen []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if i, ok := ev.Object.(*networkingv1.Ingress); ok && ev.Type != watch.Deleted {
				if s := ingressServices(i); len(s) > 0 && (len(seen) == 0 || seen[len(seen)-1] != s[0]) {
					seen = append(seen, s[0])
				}
			}
		}
	}()

	recreate := func() {
		deleteService(t, ns, current)
		current = ccmName(t)
		generation[current] = len(generation)
		createService(t, ns, current, relayLabels())
	}
	const followed, backToBack = 10, 10
	for range followed {
		recreate()
		waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), current)
	}
	for range backToBack {
		recreate()
	}
	waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), current)
	vi := waitReady(t, ns, "coder", "True", "IngressUpToDate")
	if got := virtualingress.Backends(vi)["spec.rules[0].http.paths[0].backend"].Service; got != current {
		t.Fatalf("status.backends names %v, want the last Service %s", got, current)
	}

	w.Stop()
	<-done
	for i := 1; i < len(seen); i++ {
		if generation[seen[i]] < generation[seen[i-1]] {
			t.Fatalf("the Ingress went back from Service %s (recreation %d) to %s (recreation %d); it showed %v",
				seen[i-1], generation[seen[i-1]], seen[i], generation[seen[i]], seen)
		}
	}
	t.Logf("%d recreations; the Ingress showed %d of the names, in order", len(generation)-1, len(seen))
}
