package controller

import (
	"fmt"
	"net/netip"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
)

// observed is what one reconcile saw, in the order it looks: a step that fails ends the reconcile, so the fields of
// the steps after it stay zero. decide turns it into the status; the reconcile's writes happen before, as steps.
type observed struct {
	suspended bool
	// target is why the HostedCluster or its kubeconfig cannot be used; entriesWithdrawn says that the HostedCluster
	// is gone and this object's entries were taken out of the servers' configuration with it.
	target           *failure
	entriesWithdrawn bool
	// waiting: nothing changed since the entry was published, so the hosted cluster was not asked again and the
	// conditions about it stand as they are.
	waiting bool
	// metallb is what the hosted cluster's MetalLB check found wrong; service what applying the LoadBalancer
	// Service (or deleting one under a previous name) did.
	metallb, service *failure
	serviceKey       types.NamespacedName
	ips              []netip.Addr
	poolRanges       []string
	// configWrite is the error writing the DNS and proxy configuration; entry and served what was published and
	// what the servers answer for it.
	configWrite error
	entry       routes.Cluster
	served      servedState
}

// servedState is what every CoreDNS and HAProxy replica was found serving, with the messages that say so.
type servedState struct {
	dnsOK                  bool
	dnsMsg                 string
	proxyOK, proxyRejected bool
	proxyMsg               string
}

// followUp is when the object is reconciled again without an event.
type followUp int

const (
	// backoff retries through the rate limiter: per-object exponential backoff, capped.
	backoff followUp = iota
	// never waits for an event.
	never
	// resync waits for an event, with the slow resync for one that was missed.
	resync
	// poll asks the servers again soon (Reconciler.pollAfter).
	poll
	// recheck checks a Ready object again after the recheck interval.
	recheck
)

type condition struct {
	typ     string
	status  metav1.ConditionStatus
	reason  string
	message string
}

// decision is the status one reconcile reports: conditions set in order, the phase with its reason and message, and
// when to look again.
type decision struct {
	conditions      []condition
	phase           v1alpha1.Phase
	reason, message string
	then            followUp
}

func (d *decision) set(typ string, status metav1.ConditionStatus, reason, message string) {
	d.conditions = append(d.conditions, condition{typ: typ, status: status, reason: reason, message: message})
}

func (d decision) failed(f *failure) decision {
	d.phase, d.reason, d.message, d.then = f.phase, f.reason, f.message, backoff
	return d
}

func (d decision) configWriteFailed(err error) decision {
	f := degraded("ConfigWriteFailed", "%v", err)
	d.set(CondDNSConfigured, metav1.ConditionFalse, f.reason, f.message)
	d.set(CondProxyConfigured, metav1.ConditionFalse, f.reason, f.message)
	return d.failed(f)
}

// decide is the status for what a reconcile observed. A failure keeps the DNS and proxy entries as they were (the
// status's externalIPs are not changed), except for a deleted HostedCluster, whose names must stop answering.
func decide(o observed) decision {
	var d decision
	switch {
	case o.suspended:
		d.phase, d.reason, d.then = v1alpha1.PhasePending, "Suspended", never
		d.message = "spec.suspend is true: nothing is reconciled; DNS and proxy entries keep their last state"
		return d
	case o.target != nil:
		d.set(CondHostedClusterReachable, metav1.ConditionFalse, o.target.reason, o.target.message)
		if o.entriesWithdrawn {
			d.set(CondDNSConfigured, metav1.ConditionFalse, o.target.reason, "the entries were removed with the HostedCluster")
			d.set(CondProxyConfigured, metav1.ConditionFalse, o.target.reason, "the entries were removed with the HostedCluster")
		}
		return d.failed(o.target)
	}
	if !o.waiting {
		var done bool
		if d, done = d.hostedCluster(o); done {
			return d
		}
	}
	if o.configWrite != nil {
		return d.configWriteFailed(o.configWrite)
	}
	return d.servedBy(o)
}

// hostedCluster decides the conditions about the hosted cluster (reachable, Service, external IP); done says that
// the object's status ends there.
func (d decision) hostedCluster(o observed) (decision, bool) {
	reachable := func() {
		d.set(CondHostedClusterReachable, metav1.ConditionTrue, "Reachable", "the hosted cluster's API server answers")
	}
	if f := o.metallb; f != nil {
		if f.reason == "HostedClusterUnreachable" || f.reason == "HostedClusterAccessDenied" {
			d.set(CondHostedClusterReachable, metav1.ConditionFalse, f.reason, f.message)
		} else {
			reachable()
			d.set(CondServiceReady, metav1.ConditionFalse, f.reason, f.message)
		}
		return d.failed(f), true
	}
	reachable()
	if f := o.service; f != nil {
		if f.reason == "HostedClusterUnreachable" {
			d.set(CondHostedClusterReachable, metav1.ConditionFalse, f.reason, f.message)
		}
		d.set(CondServiceReady, metav1.ConditionFalse, f.reason, f.message)
		return d.failed(f), true
	}
	d.set(CondServiceReady, metav1.ConditionTrue, "Applied", fmt.Sprintf("LoadBalancer Service %s applied", o.serviceKey))
	if len(o.ips) == 0 {
		if o.configWrite != nil {
			return d.configWriteFailed(o.configWrite), true
		}
		f := pending("ExternalIPPending", "Service %s has no load-balancer IP yet (MetalLB assigns it)", o.serviceKey)
		d.set(CondExternalIPAssigned, metav1.ConditionFalse, f.reason, f.message)
		d.phase, d.reason, d.message, d.then = f.phase, f.reason, f.message, resync
		return d, true
	}
	if outside := outsideRanges(o.ips, o.poolRanges); len(outside) > 0 {
		d.set(CondExternalIPAssigned, metav1.ConditionTrue, "OutsidePoolRanges",
			fmt.Sprintf("%s outside spec.metallb.ipAddressPoolRanges %s (not enforced)", strings.Join(outside, ", "), strings.Join(o.poolRanges, ", ")))
	} else {
		d.set(CondExternalIPAssigned, metav1.ConditionTrue, "Assigned", join(o.ips))
	}
	return d, false
}

// servedBy decides DNSConfigured, ProxyConfigured and the phase from what the servers serve: Ready only once every
// replica of both serves the entry.
func (d decision) servedBy(o observed) decision {
	s := o.served
	if s.dnsOK {
		d.set(CondDNSConfigured, metav1.ConditionTrue, "Served", s.dnsMsg)
	} else {
		d.set(CondDNSConfigured, metav1.ConditionFalse, "NotServedYet", s.dnsMsg)
	}
	switch {
	case s.proxyOK:
		d.set(CondProxyConfigured, metav1.ConditionTrue, "Loaded", s.proxyMsg)
	case s.proxyRejected:
		d.set(CondProxyConfigured, metav1.ConditionFalse, "ConfigRejected", s.proxyMsg)
		return d.failed(degraded("ConfigRejected", "%s", s.proxyMsg))
	default:
		d.set(CondProxyConfigured, metav1.ConditionFalse, "NotLoadedYet", s.proxyMsg)
	}
	if !s.dnsOK || !s.proxyOK {
		var waiting []string
		if !s.dnsOK {
			waiting = append(waiting, s.dnsMsg)
		}
		if !s.proxyOK {
			waiting = append(waiting, s.proxyMsg)
		}
		d.phase, d.reason, d.message, d.then = v1alpha1.PhasePending, "ConfigNotServedYet", strings.Join(waiting, "; "), poll
		return d
	}
	d.phase, d.reason, d.then = v1alpha1.PhaseReady, "Ready", recheck
	d.message = fmt.Sprintf("*.apps.%s.%s served at %s", o.entry.Name, o.entry.BaseDomain, join(o.ips))
	return d
}
