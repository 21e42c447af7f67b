package controller

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
)

func TestDecide(t *testing.T) {
	svc := types.NamespacedName{Namespace: "apps-ingress", Name: "apps-ingress-c1"}
	ip := []netip.Addr{netip.MustParseAddr("198.19.10.50")}
	served := servedState{dnsOK: true, dnsMsg: "2 of 2 replicas answer", proxyOK: true, proxyMsg: "2 of 2 replicas loaded it"}
	reachedAll := func(o observed) observed {
		o.serviceKey, o.ips, o.entry = svc, ip, routes.Cluster{Name: "c1", BaseDomain: "example.test"}
		return o
	}
	// want lists the conditions set, as "Type=Status/Reason", in order.
	for _, tc := range []struct {
		name    string
		in      observed
		want    []string
		phase   v1alpha1.Phase
		reason  string
		then    followUp
		message string
	}{{
		name: "suspended: nothing is touched, no retry", in: observed{suspended: true},
		phase: v1alpha1.PhasePending, reason: "Suspended", then: never,
	}, {
		name:  "kubeconfig missing: only reachability, entries kept",
		in:    observed{target: pending("KubeconfigMissing", "Secret ns/kc not found")},
		want:  []string{"HostedClusterReachable=False/KubeconfigMissing"},
		phase: v1alpha1.PhasePending, reason: "KubeconfigMissing", then: backoff,
	}, {
		name: "hosted cluster deleted: its entries are withdrawn and the conditions say so",
		in:   observed{target: degraded("HostedClusterNotFound", "gone"), entriesWithdrawn: true},
		want: []string{"HostedClusterReachable=False/HostedClusterNotFound", "DNSConfigured=False/HostedClusterNotFound",
			"ProxyConfigured=False/HostedClusterNotFound"},
		phase: v1alpha1.PhaseDegraded, reason: "HostedClusterNotFound", then: backoff,
	}, {
		name:  "MetalLB check cannot reach the hosted cluster",
		in:    observed{metallb: degraded("HostedClusterUnreachable", "dial tcp: refused")},
		want:  []string{"HostedClusterReachable=False/HostedClusterUnreachable"},
		phase: v1alpha1.PhaseDegraded, reason: "HostedClusterUnreachable", then: backoff,
	}, {
		name:  "MetalLB pool missing: the cluster answers, the Service cannot get an address",
		in:    observed{metallb: degraded("IPAddressPoolNotFound", "no pool vlan10")},
		want:  []string{"HostedClusterReachable=True/Reachable", "ServiceReady=False/IPAddressPoolNotFound"},
		phase: v1alpha1.PhaseDegraded, reason: "IPAddressPoolNotFound", then: backoff,
	}, {
		name: "Service apply loses the hosted cluster",
		in:   observed{service: degraded("HostedClusterUnreachable", "timeout")},
		want: []string{"HostedClusterReachable=True/Reachable", "HostedClusterReachable=False/HostedClusterUnreachable",
			"ServiceReady=False/HostedClusterUnreachable"},
		phase: v1alpha1.PhaseDegraded, reason: "HostedClusterUnreachable", then: backoff,
	}, {
		name:  "no load-balancer IP yet: waits for the Service watch",
		in:    observed{serviceKey: svc},
		want:  []string{"HostedClusterReachable=True/Reachable", "ServiceReady=True/Applied", "ExternalIPAssigned=False/ExternalIPPending"},
		phase: v1alpha1.PhasePending, reason: "ExternalIPPending", then: resync,
		message: "Service apps-ingress/apps-ingress-c1 has no load-balancer IP yet",
	}, {
		name: "no IP, and the API endpoint could not be written",
		in:   observed{serviceKey: svc, configWrite: errors.New("configmaps is forbidden")},
		want: []string{"HostedClusterReachable=True/Reachable", "ServiceReady=True/Applied",
			"DNSConfigured=False/ConfigWriteFailed", "ProxyConfigured=False/ConfigWriteFailed"},
		phase: v1alpha1.PhaseDegraded, reason: "ConfigWriteFailed", then: backoff, message: "configmaps is forbidden",
	}, {
		name: "writing the configuration failed: entries as they were, backoff",
		in:   reachedAll(observed{configWrite: errors.New("etcdserver: request is too large")}),
		want: []string{"HostedClusterReachable=True/Reachable", "ServiceReady=True/Applied", "ExternalIPAssigned=True/Assigned",
			"DNSConfigured=False/ConfigWriteFailed", "ProxyConfigured=False/ConfigWriteFailed"},
		phase: v1alpha1.PhaseDegraded, reason: "ConfigWriteFailed", then: backoff,
	}, {
		name: "every replica serves it: Ready, checked again later",
		in:   reachedAll(observed{served: served}),
		want: []string{"HostedClusterReachable=True/Reachable", "ServiceReady=True/Applied", "ExternalIPAssigned=True/Assigned",
			"DNSConfigured=True/Served", "ProxyConfigured=True/Loaded"},
		phase: v1alpha1.PhaseReady, reason: "Ready", then: recheck, message: "*.apps.c1.example.test served at 198.19.10.50",
	}, {
		name: "an address outside the pool's ranges is reported, not refused",
		in:   reachedAll(observed{served: served, poolRanges: []string{"198.19.20.0/24"}}),
		want: []string{"HostedClusterReachable=True/Reachable", "ServiceReady=True/Applied", "ExternalIPAssigned=True/OutsidePoolRanges",
			"DNSConfigured=True/Served", "ProxyConfigured=True/Loaded"},
		phase: v1alpha1.PhaseReady, reason: "Ready", then: recheck,
	}, {
		name: "only waiting: the hosted cluster's conditions stand, DNS not served yet",
		in: reachedAll(observed{waiting: true, served: servedState{dnsMsg: "replica 10.0.0.2:53 answers nothing",
			proxyOK: true, proxyMsg: "loaded"}}),
		want:  []string{"DNSConfigured=False/NotServedYet", "ProxyConfigured=True/Loaded"},
		phase: v1alpha1.PhasePending, reason: "ConfigNotServedYet", then: poll, message: "replica 10.0.0.2:53 answers nothing",
	}, {
		name:  "neither served: both reasons in the message",
		in:    reachedAll(observed{waiting: true, served: servedState{dnsMsg: "dns lags", proxyMsg: "proxy lags"}}),
		want:  []string{"DNSConfigured=False/NotServedYet", "ProxyConfigured=False/NotLoadedYet"},
		phase: v1alpha1.PhasePending, reason: "ConfigNotServedYet", then: poll, message: "dns lags; proxy lags",
	}, {
		name:  "the proxy refused the configuration: Degraded, not waiting",
		in:    reachedAll(observed{waiting: true, served: servedState{dnsOK: true, proxyRejected: true, proxyMsg: "[ALERT] parsing"}}),
		want:  []string{"DNSConfigured=True/Served", "ProxyConfigured=False/ConfigRejected"},
		phase: v1alpha1.PhaseDegraded, reason: "ConfigRejected", then: backoff, message: "[ALERT] parsing",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(tc.in)
			var got []string
			for _, c := range d.conditions {
				got = append(got, c.typ+"="+string(c.status)+"/"+c.reason)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("conditions:\n got %v\nwant %v", got, tc.want)
			}
			if d.phase != tc.phase || d.reason != tc.reason || d.then != tc.then {
				t.Errorf("got %s/%s then %d, want %s/%s then %d", d.phase, d.reason, d.then, tc.phase, tc.reason, tc.then)
			}
			if !strings.Contains(d.message, tc.message) {
				t.Errorf("message %q does not contain %q", d.message, tc.message)
			}
		})
	}
}

// TestConcludeSetsWhatDecideSays checks the status written from a decision: every condition with the object's
// generation, and Ready following the phase.
func TestConcludeSetsWhatDecideSays(t *testing.T) {
	r := &Reconciler{recheck: time.Minute, loadPoll: time.Second, slowResync: 5 * time.Minute, now: time.Now}
	ai := &v1alpha1.AppsIngress{}
	ai.Generation = 4
	ensureConditions(ai)
	res := r.conclude(ai, observed{serviceKey: types.NamespacedName{Namespace: "n", Name: "s"}})
	if res.RequeueAfter != r.slowResync {
		t.Errorf("requeue after %s, want the slow resync", res.RequeueAfter)
	}
	for _, c := range ai.Status.Conditions {
		if c.ObservedGeneration != 4 {
			t.Errorf("%s: observedGeneration %d", c.Type, c.ObservedGeneration)
		}
	}
	ready := meta.FindStatusCondition(ai.Status.Conditions, CondReady)
	if ready.Status != metav1.ConditionFalse || ready.Reason != "ExternalIPPending" || ai.Status.Phase != v1alpha1.PhasePending {
		t.Errorf("Ready %s/%s, phase %s", ready.Status, ready.Reason, ai.Status.Phase)
	}
}
