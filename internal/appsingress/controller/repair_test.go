package controller

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
)

// An entry a CoreDNS replica has not served for dnsRepairAfter, while running the same configuration all that time,
// gets a reload request: the Corefile alone is written again, with a new generation; a second object waiting as long
// within the same period does not make another, a replica whose generation moves is not stuck, and the status says
// what was done.
func TestUnservedDNSEntryRequestsOneReload(t *testing.T) {
	a, b := example(), example()
	b.Name, b.Spec.HostedClusterRef.Name = "dev", "dev"
	a.Status.ExternalIPs, b.Status.ExternalIPs = []string{"192.0.2.1"}, []string{"192.0.2.2"}
	p, c := testPublisher(t, a.DeepCopy(), b.DeepCopy())
	start := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	now := start
	recorder := events.NewFakeRecorder(10)
	r := &Reconciler{publisher: p, recorder: recorder, dnsRepairAfter: 30 * time.Second, now: func() time.Time { return now }}
	if _, err := p.publish(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	corefile := func() string {
		cm := &corev1.ConfigMap{}
		if err := c.Get(context.Background(), p.dnsMap, cm); err != nil {
			t.Fatal(err)
		}
		return cm.Data[dns.CorefileKey]
	}
	written := corefile()
	waiting := func(ai *v1alpha1.AppsIngress) {
		ai.Status.Conditions = nil
		meta.SetStatusCondition(&ai.Status.Conditions, metav1.Condition{
			Type: CondDNSConfigured, Status: metav1.ConditionFalse, Reason: "NotServedYet", LastTransitionTime: metav1.NewTime(start),
		})
	}
	waiting(a)
	waiting(b)

	replica := netip.MustParseAddrPort("10.0.0.53:53")
	if msg, err := r.repairDNS(context.Background(), a, replica, "g1", "not served"); err != nil || msg != "not served" {
		t.Fatalf("first seen: %q (%v)", msg, err)
	}
	now = start.Add(29 * time.Second)
	if msg, err := r.repairDNS(context.Background(), a, replica, "g1", "not served"); err != nil || msg != "not served" || corefile() != written {
		t.Fatalf("29 s after it was written: %q (%v); the Corefile changed: %t", msg, err, corefile() != written)
	}
	now = start.Add(31 * time.Second)
	msg, err := r.repairDNS(context.Background(), a, replica, "g1", "not served")
	if err != nil || !strings.Contains(msg, `has run configuration "g1" for over 30s`) || !strings.Contains(msg, "(request 1)") {
		t.Fatalf("31 s after it was written, the replica on the same generation: %q (%v)", msg, err)
	}
	requested := corefile()
	if requested == written || !strings.Contains(requested, "-1\"") {
		t.Fatalf("the reload request did not change the Corefile's generation:\n%s", requested)
	}
	if ev := <-recorder.Events; !strings.Contains(ev, "DNSReloadRequested") {
		t.Fatalf("event %q", ev)
	}
	now = start.Add(45 * time.Second)
	msg, err = r.repairDNS(context.Background(), b, replica, "g1", "not served")
	if err != nil || !strings.Contains(msg, "a reload of every replica's configuration was requested") || corefile() != requested {
		t.Fatalf("a second object within the period: %q (%v), Corefile rewritten: %t", msg, err, corefile() != requested)
	}
	// A replica whose generation moves is catching up: it is left to it, however long the entry has waited.
	now = start.Add(100 * time.Second)
	if msg, err = r.repairDNS(context.Background(), b, replica, "g2", "not served"); err != nil || msg != "not served" {
		t.Fatalf("a replica on a new generation: %q (%v)", msg, err)
	}
	now = start.Add(131 * time.Second)
	if msg, err = r.repairDNS(context.Background(), b, replica, "g2", "not served"); err != nil || !strings.Contains(msg, "(request 2)") || corefile() == requested {
		t.Fatalf("the same replica 31 s on its new generation: %q (%v)", msg, err)
	}
	// A served entry (condition true) asks for nothing.
	meta.SetStatusCondition(&a.Status.Conditions, metav1.Condition{Type: CondDNSConfigured, Status: metav1.ConditionTrue, Reason: "Served"})
	now = start.Add(200 * time.Second)
	if msg, err = r.repairDNS(context.Background(), a, replica, "g1", "served"); err != nil || msg != "served" {
		t.Fatalf("a served entry: %q (%v)", msg, err)
	}
}
