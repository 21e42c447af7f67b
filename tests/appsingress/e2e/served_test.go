//go:build e2e

package e2e_test

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
)

// TestReadyWaitsUntilCoreDNSAndHAProxyServeTheEntry: while the files CoreDNS and HAProxy read are not updated (a
// kubelet that has not synced the ConfigMap volumes yet), the AppsIngress has its external IP and its ConfigMaps
// written but is not Ready, and says which server does not serve what; once the files arrive it is Ready, and at
// that moment both views already answer.
func TestReadyWaitsUntilCoreDNSAndHAProxyServeTheEntry(t *testing.T) {
	noSyncErrors(t)
	if err := startMetalLB(context.Background()); err != nil {
		t.Fatal(err)
	}
	const name = "served"
	key := types.NamespacedName{Namespace: clustersNS, Name: name}
	c := mgmtClient(t)
	configSync.hold.Store(true)
	defer configSync.hold.Store(false)
	createAppsIngress(t, name, poolA, nil)
	t.Cleanup(func() { deleteAndWait(t, key) })

	ai := waitFor(t, c, key, "waiting for the servers", time.Minute, func(ai *v1alpha1.AppsIngress) bool {
		return strings.HasPrefix(conditionStatus(ai, controller.CondExternalIPAssigned), "True/") && ai.Status.Reason == "ConfigNotServedYet"
	})
	for _, typ := range []string{controller.CondDNSConfigured, controller.CondProxyConfigured, controller.CondReady} {
		if !strings.HasPrefix(conditionStatus(ai, typ), "False/") {
			t.Fatalf("%s is %s before CoreDNS and HAProxy have the files", typ, conditionStatus(ai, typ))
		}
	}
	if ai.Status.Phase != v1alpha1.PhasePending || !strings.Contains(ai.Status.Message, "CoreDNS ") || !strings.Contains(ai.Status.Message, "HAProxy ") {
		t.Fatalf("the status does not say what is missing: %s %s", ai.Status.Phase, ai.Status.Message)
	}
	// Well past the kubelet-like delay the operator used to trust: still not Ready.
	time.Sleep(3 * time.Second)
	waitFor(t, c, key, "still waiting", time.Second, phaseIs(v1alpha1.PhasePending, "ConfigNotServedYet"))

	configSync.hold.Store(false)
	ai = waitFor(t, c, key, "Ready", time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))
	apps := "console-openshift-console.apps." + name + "." + baseDomain
	if _, got := lookup(t, vlanClient, apps, dnsmessage.TypeA); !equalAddrs(got, ai.Status.ExternalIPs) {
		t.Fatalf("Ready, but the VLAN view answers %v, not %v", got, ai.Status.ExternalIPs)
	}
	if _, got := lookup(t, podClient, apps, dnsmessage.TypeA); !equalAddrs(got, []string{proxyIP}) {
		t.Fatalf("Ready, but the pod-network view answers %v", got)
	}
	for _, typ := range []string{controller.CondDNSConfigured, controller.CondProxyConfigured} {
		if !strings.HasPrefix(conditionStatus(ai, typ), "True/") {
			t.Fatalf("Ready with %s %s", typ, conditionStatus(ai, typ))
		}
	}
}

// TestRefusedProxyConfigurationIsReported: an HAProxy that refuses the file (here, one line it does not know added
// on the way) keeps serving its previous configuration, and the AppsIngress is Degraded with HAProxy's own message;
// a file it accepts makes it Ready again.
func TestRefusedProxyConfigurationIsReported(t *testing.T) {
	noSyncErrors(t)
	if err := startMetalLB(context.Background()); err != nil {
		t.Fatal(err)
	}
	const name = "refused"
	key := types.NamespacedName{Namespace: clustersNS, Name: name}
	c := mgmtClient(t)
	edit := func(cfg string) string { return cfg + "\nfrontend broken\n    bogus-directive on\n" }
	configSync.proxyEdit.Store(&edit)
	defer configSync.proxyEdit.Store(nil)
	createAppsIngress(t, name, poolA, nil)
	t.Cleanup(func() { deleteAndWait(t, key) })

	ai := waitFor(t, c, key, "Degraded/ConfigRejected", time.Minute, phaseIs(v1alpha1.PhaseDegraded, "ConfigRejected"))
	if !strings.Contains(ai.Status.Message, "bogus-directive") || !strings.HasPrefix(conditionStatus(ai, controller.CondProxyConfigured), "False/") {
		t.Fatalf("the status does not carry HAProxy's message: %s", ai.Status.Message)
	}

	configSync.proxyEdit.Store(nil)
	waitFor(t, c, key, "Ready", time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))
}

// TestReadyObjectIsCheckedAgainWithoutEvents: with nothing changing in either cluster, the re-checks of a Ready
// object write nothing (lastSyncTime alone is refreshed only every controller.LastSyncRefresh); a hosted API server
// that stops answering turns HostedClusterReachable false within the re-check period, and the last good entries stay
// served.
func TestReadyObjectIsCheckedAgainWithoutEvents(t *testing.T) {
	noSyncErrors(t)
	if err := startMetalLB(context.Background()); err != nil {
		t.Fatal(err)
	}
	const name = "recheck"
	key := types.NamespacedName{Namespace: clustersNS, Name: name}
	c := mgmtClient(t)
	createAppsIngress(t, name, poolA, nil)
	t.Cleanup(func() { deleteAndWait(t, key) })
	ai := waitFor(t, c, key, "Ready", time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))
	if ai.Status.LastSyncTime == nil {
		t.Fatal("Ready without status.lastSyncTime")
	}

	// Two re-check periods (plus jitter) with nothing changing: the operator re-checks (reconciles that end Ready)
	// and leaves the object as it was.
	ready := reconcilesEndingReady(t)
	time.Sleep(2*recheckInterval + recheckInterval/5)
	if got := reconcilesEndingReady(t) - ready; got < 2 {
		t.Fatalf("%v reconciles ended Ready in two re-check periods, want at least 2", got)
	}
	now := &v1alpha1.AppsIngress{}
	if err := c.Get(context.Background(), key, now); err != nil {
		t.Fatal(err)
	}
	if now.ResourceVersion != ai.ResourceVersion {
		t.Fatalf("re-checks that found nothing new wrote the AppsIngress: resourceVersion %s → %s, lastSyncTime %v → %v",
			ai.ResourceVersion, now.ResourceVersion, ai.Status.LastSyncTime, now.Status.LastSyncTime)
	}

	if err := hostedCl.StopComponent(devcluster.ComponentAPIServer); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	t.Cleanup(func() {
		if err := hostedCl.StartComponent(context.Background(), devcluster.ComponentAPIServer); err != nil {
			t.Error(err)
		}
	})
	// One re-check period (plus its jitter) and one request timeout.
	waitFor(t, c, key, "HostedClusterReachable=False", recheckInterval+recheckInterval/10+10*time.Second, func(ai *v1alpha1.AppsIngress) bool {
		return strings.HasPrefix(conditionStatus(ai, controller.CondHostedClusterReachable), "False/")
	})
	t.Logf("unreachable seen %s after the API server stopped (re-check every %s)", time.Since(stopped).Round(time.Millisecond), recheckInterval)
	apps := "x.apps." + name + "." + baseDomain
	if _, got := lookup(t, vlanClient, apps, dnsmessage.TypeA); !equalAddrs(got, ai.Status.ExternalIPs) {
		t.Fatalf("the VLAN view answers %v once the hosted cluster is unreachable, not the last good %v", got, ai.Status.ExternalIPs)
	}
}

// equalAddrs says whether got holds exactly the addresses of want.
func equalAddrs(got []netip.Addr, want []string) bool {
	return slices.Equal(sorted(addrStrings(got)), sorted(want))
}

func sorted(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}

// reconcilesEndingReady is the operator's appsingress_reconcile_total{result="Ready"} (it runs in this process).
func reconcilesEndingReady(t *testing.T) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "appsingress_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == string(v1alpha1.PhaseReady) {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
