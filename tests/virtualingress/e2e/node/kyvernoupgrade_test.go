//go:build node

package node_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// syncEvery is how often the GitOps sync that runs during Kyverno's upgrade applies its next pair.
const syncEvery = 200 * time.Millisecond

// upgradeKyvernoUnderLoad upgrades Kyverno's chart from the release before the pinned one to the pinned one, as users
// do (`helm upgrade --wait`, CRDs first), while requests flow to resolved's VirtualIngress and a GitOps sync applies a
// Service and its VirtualIngress every syncEvery. What users see: no request may fail, no VirtualIngress of
// resolved may be written nor Ingress recreated, a refused write must say what refused it and leave nothing behind,
// and after the sync's retry every VirtualIngress it applied is Ready.
func upgradeKyvernoUnderLoad(t *testing.T, resolved resolvedSource) {
	t.Helper()
	ctx := context.Background()
	ns := newNodeNamespace(t)
	during := resolved.sendRequests()
	stop := make(chan struct{})
	type outcome struct {
		pairs   int
		refused map[int]error
	}
	synced := make(chan outcome, 1)
	go func() {
		o := outcome{refused: map[int]error{}}
		tick := time.NewTicker(syncEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				synced <- o
				return
			case <-tick.C:
			}
			if err := applyPair(ctx, ns, o.pairs); err != nil {
				o.refused[o.pairs] = err
			}
			o.pairs++
		}
	}()
	begin := time.Now()
	version, err := node.Cluster.UpgradeKyverno(ctx)
	upgraded := time.Now()
	took := upgraded.Sub(begin)
	close(stop)
	o := <-synced
	if err != nil {
		during.check(t, "Kyverno's chart upgrade")
		t.Fatal(err)
	}
	what := "Kyverno's chart upgrade to " + version
	t.Logf("%s: helm upgrade --wait took %s", what, took.Round(100*time.Millisecond))
	waitPolicies(t)
	during.check(t, what)
	resolved.unchanged(t, what)
	assertKyvernoRuns(t, version)
	checkRefusals(t, ns, o.refused)
	t.Logf("%s: a GitOps sync applied %d pairs during it, %d of them refused", what, o.pairs, len(o.refused))
	for i := range o.refused {
		if err := applyPair(ctx, ns, i); err != nil {
			t.Fatalf("retrying pair %d: %v", i, err)
		}
	}
	waitAllReady(t, node.Dyn.Resource(virtualingress.GVR).Namespace(ns), o.pairs, 5*time.Minute)
	t.Logf("%s: all %d VirtualIngresses of that sync Ready at most %s after the upgrade ended", what, o.pairs, time.Since(upgraded).Round(100*time.Millisecond))
}

// assertKyvernoRuns fails unless every Deployment of Kyverno's chart runs version in all its containers, with as many
// Ready replicas as kyvernoDeployments says.
func assertKyvernoRuns(t *testing.T, version string) {
	t.Helper()
	for name, want := range kyvernoDeployments {
		d, err := node.Kube.AppsV1().Deployments(devcluster.KyvernoNamespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if !strings.HasSuffix(c.Image, ":"+version) {
				t.Errorf("Deployment %s container %s runs %s, not %s", name, c.Name, c.Image, version)
			}
		}
		if d.Status.ReadyReplicas != want || d.Status.UpdatedReplicas != want {
			t.Errorf("Deployment %s: %d Ready and %d updated replicas, want %d", name, d.Status.ReadyReplicas, d.Status.UpdatedReplicas, want)
		}
	}
}
