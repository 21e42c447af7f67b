//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// convergeTimeout bounds every wait for the policies to act. Typical resolution takes well under a second (see
// `make bench`); the margin absorbs a loaded 2-core CI machine.
const convergeTimeout = 60 * time.Second

// eventually waits (poll.Until) until cond holds, for at most convergeTimeout.
func eventually(t *testing.T, what string, cond func() (bool, string, error)) {
	t.Helper()
	poll.Until(t, convergeTimeout, what, cond)
}

// dumpKyvernoLogsOnFailure prints the Kyverno logs when the test fails: they say why a policy did not act.
func dumpKyvernoLogsOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, c := range []string{devcluster.ComponentKyverno, devcluster.ComponentKyvernoBackground} {
			t.Logf("---- last lines of %s (%s) ----\n%s", c, env.cluster.LogPath(c), env.cluster.Logs(c))
		}
	})
}

func getIngress(ns, name string) (*networkingv1.Ingress, error) {
	return env.kube.NetworkingV1().Ingresses(ns).Get(context.Background(), name, metav1.GetOptions{})
}

// ingressServices lists the Service names of every backend (defaultBackend first, then rules in order).
func ingressServices(ing *networkingv1.Ingress) []string {
	var names []string
	if b := ing.Spec.DefaultBackend; b != nil && b.Service != nil {
		names = append(names, b.Service.Name)
	}
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for _, p := range r.HTTP.Paths {
			if p.Backend.Service != nil {
				names = append(names, p.Backend.Service.Name)
			}
		}
	}
	return names
}

// waitIngressServices waits until the Ingress exists and routes to exactly these Services, in order.
func waitIngressServices(t *testing.T, ns, name string, want ...string) *networkingv1.Ingress {
	t.Helper()
	var ing *networkingv1.Ingress
	eventually(t, fmt.Sprintf("Ingress %s/%s routing to %v", ns, name, want), func() (bool, string, error) {
		var err error
		ing, err = getIngress(ns, name)
		if apierrors.IsNotFound(err) {
			return false, "not found", nil
		}
		if err != nil {
			return false, "", err
		}
		got := ingressServices(ing)
		return strings.Join(got, ",") == strings.Join(want, ","), fmt.Sprint(got), nil
	})
	return ing
}

// waitReady waits until the VirtualIngress's Ready condition (the status controller's) has this status and reason.
func waitReady(t *testing.T, ns, name, status, reason string) *unstructured.Unstructured {
	t.Helper()
	var vi *unstructured.Unstructured
	eventually(t, fmt.Sprintf("VirtualIngress %s/%s Ready=%s/%s", ns, name, status, reason), func() (bool, string, error) {
		var err error
		vi, err = env.dyn.Resource(virtualIngressGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		s, r, m := virtualingress.Condition(vi, "Ready")
		return s == status && r == reason, fmt.Sprintf("%s/%s: %s", s, r, m), nil
	})
	return vi
}

// assertNoIngress checks that no Ingress of that name exists.
func assertNoIngress(t *testing.T, ns, name string) {
	t.Helper()
	_, err := getIngress(ns, name)
	if err == nil {
		t.Fatalf("Ingress %s/%s exists, want none", ns, name)
	}
	if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}
