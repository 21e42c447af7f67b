package controller

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

var (
	reconcileResults = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "appsingress_reconcile_total",
		Help: "AppsIngress reconciles by outcome: the phase reached, or error.",
	}, []string{"result"})
	phaseGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "appsingress_phase",
		Help: "1 for the current phase of each AppsIngress, 0 for the others.",
	}, []string{"namespace", "name", "phase"})
	hostedClientErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "appsingress_hosted_cluster_client_errors_total",
		Help: "Failed requests to hosted clusters, by AppsIngress and reason.",
	}, []string{"namespace", "name", "reason"})
	renders = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "appsingress_config_writes_total",
		Help: "Writes of the DNS and proxy ConfigMaps, by outcome.",
	}, []string{"result"})

	dnsReloadRequests = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "appsingress_dns_reload_requests_total",
		Help: "Reload requests written into the Corefile because a CoreDNS replica ran one configuration without serving an entry for longer than --dns-repair-after.",
	})

	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(reconcileResults, phaseGauge, hostedClientErrors, renders, dnsReloadRequests)
	})
}

func recordPhase(ai *v1alpha1.AppsIngress) {
	for _, p := range []v1alpha1.Phase{v1alpha1.PhasePending, v1alpha1.PhaseReady, v1alpha1.PhaseDegraded} {
		v := 0.0
		if ai.Status.Phase == p {
			v = 1
		}
		phaseGauge.WithLabelValues(ai.Namespace, ai.Name, string(p)).Set(v)
	}
}

func forgetPhase(namespace, name string) {
	phaseGauge.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "name": name})
}
