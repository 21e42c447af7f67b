package controller

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

// servedGenerations remembers, per CoreDNS replica, the configuration generation it last answered and since when.
type servedGenerations struct {
	mu   sync.Mutex
	seen map[netip.AddrPort]servedGeneration
}

type servedGeneration struct {
	generation string
	since      time.Time
}

// observe records that replica answers generation at now, and returns since when it has.
func (s *servedGenerations) observe(replica netip.AddrPort, generation string, now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[netip.AddrPort]servedGeneration{}
	}
	g, ok := s.seen[replica]
	if !ok || g.generation != generation {
		g = servedGeneration{generation: generation, since: now}
		s.seen[replica] = g
	}
	return g.since
}

// repairDNS requests a reload of CoreDNS's configuration when replica is stuck: ai's entry has gone unserved for
// dnsRepairAfter (its DNSConfigured condition false that long) and the replica has run the same generation all that
// while. The files are right (they were written); a replica whose reload check missed them (a restart that failed,
// files that changed and changed back while it restarted) keeps serving the previous ones until something changes
// them, and the request is that change. A replica whose generation moves is catching up (a fleet being created) and
// is left to it. It returns msg with what was done.
func (r *Reconciler) repairDNS(ctx context.Context, ai *v1alpha1.AppsIngress, replica netip.AddrPort, generation, msg string) (string, error) {
	now := r.now()
	since := r.generations.observe(replica, generation, now)
	c := meta.FindStatusCondition(ai.Status.Conditions, CondDNSConfigured)
	if c == nil || c.Status != metav1.ConditionFalse || now.Sub(c.LastTransitionTime.Time) < r.dnsRepairAfter || now.Sub(since) < r.dnsRepairAfter {
		return msg, nil
	}
	stuck := fmt.Sprintf("%s; CoreDNS %s has run configuration %q for over %s without serving it", msg, replica, generation, r.dnsRepairAfter)
	request, err := r.publisher.requestDNSReload(ctx, now, r.dnsRepairAfter)
	if err != nil {
		return "", err
	}
	if request == 0 {
		return stuck + ": a reload of every replica's configuration was requested", nil
	}
	dnsReloadRequests.Inc()
	r.recorder.Eventf(ai, nil, corev1.EventTypeWarning, "DNSReloadRequested", "Repair",
		"CoreDNS %s has run configuration %q for %s without serving this entry; every replica was asked to reload its configuration (request %d)",
		replica, generation, now.Sub(since).Round(time.Second), request)
	return fmt.Sprintf("%s: every replica was asked to reload its configuration (request %d)", stuck, request), nil
}
