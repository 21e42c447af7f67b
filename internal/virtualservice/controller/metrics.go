package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Reconcile results, the values of the result label of reconcileResults.
const (
	resultCreated   = "created"
	resultUpdated   = "updated"
	resultUnchanged = "unchanged"
	resultDeleted   = "deleted"
	resultForeign   = "foreign_virtualservice"
	resultWaiting   = "waiting_for_cache"
	resultError     = "error"
)

// The metrics live in controller-runtime's registry, so they are served on the manager's metrics endpoint next to
// controller_runtime_*, workqueue_* and rest_client_*.
var (
	reconcileResults = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "virtualservice_operator_reconcile_results_total",
		Help: "Reconciles of production Services by outcome.",
	}, []string{"result"})
	developerRoutes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "virtualservice_operator_developer_routes",
		Help: "Developer routes in force per production Service.",
	}, []string{"service"})
	skippedRoutes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "virtualservice_operator_skipped_developer_routes",
		Help: "Developer Services of a production Service left without a route (no ready endpoint on a compatible port, unreadable namespace).",
	}, []string{"service"})
	writes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "virtualservice_operator_virtualservice_writes_total",
		Help: "Write requests for VirtualServices sent to the API server, by operation (apply, delete).",
	}, []string{"operation"})
	writeConflicts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "virtualservice_operator_write_conflicts_total",
		Help: "VirtualService writes rejected because the object changed since it was read; each is retried after a backoff on a fresh read.",
	})
	configReloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "virtualservice_operator_config_reloads_total",
		Help: "Reads of the ConfigMap by outcome: applied (the configuration changed), unchanged, invalid, missing.",
	}, []string{"result"})
	configValid = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "virtualservice_operator_config_valid",
		Help: "1 if the ConfigMap as last read is valid and in force, 0 if the last good configuration (if any) is kept.",
	})
)

func init() {
	metrics.Registry.MustRegister(reconcileResults, developerRoutes, skippedRoutes, writes, writeConflicts,
		configReloads, configValid)
}
