//go:build e2e

package e2e

import (
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

// engines are the chart's policy engines; every scenario runs once per engine. generatingPolicy goes first: the
// VirtualIngress CRD is then new to Kyverno's controllers, which is where the CEL engine has had trouble (a lost
// Service event, from a type lookup in a cache loaded before the CRD existed).
var engines = []string{policyengine.GeneratingPolicy, policyengine.ClusterPolicy}

// TestVirtualIngress runs the scenarios in a fixed order, once per policy engine, each engine on a fresh install of
// the chart, the VirtualHTTPRoute scenarios too where the engine renders them. The scenarios that reconfigure the Helm
// release (upgrades, uninstall) come last because they change what every other scenario relies on. Then the engines are switched back and forth under existing Ingresses.
func TestVirtualIngress(t *testing.T) {
	scenarios := []struct {
		name string
		run  func(*testing.T)
	}{
		{"created before its Service", testCreatedBeforeService},
		{"applied together with its Service, generateName, relabel: no repair needed", testAppliedTogether},
		{"Service recreated under a new name", testServiceRecreated},
		{"rapid Service recreations never send the Ingress back", testRapidRecreations},
		{"several paths, named backend, defaultBackend", testSeveralBackends},
		{"several matches under error", testMultipleMatchesError},
		{"deleting the VirtualIngress deletes the Ingress", testGarbageCollection},
		{"edits of the VirtualIngress reach the Ingress", testEdits},
		{"annotations kept and excluded", testAnnotations},
		{"bad input rejected by the API server", testBadInput},
		{"VirtualIngress write needs Ingress write", testWriteRights},
		{"status is read-only outside the served namespaces", testStatusOutsideServedNamespaces},
		{"the status controller's token cannot bring its own Ingress", testStatusControllerCannotBringItsOwnIngress},
		{"an Ingress name held by another Ingress is refused", testIngressNameTaken},
		{"an Ingress appearing while the VirtualIngress is unresolved is never taken over", testNoTakeoverWhileUnresolved(ingressTakeover)},
		{"an Ingress appearing before generation is never taken over", testNoTakeoverBeforeGeneration(ingressTakeover)},
		{"an Ingress pre-created under a VirtualIngress's name and claiming it is refused", testNoPreCreatedClaim(ingressTakeover)},
		{"an Ingress is never taken over through its status subresource", testNoTakeoverThroughStatus(ingressTakeover)},
		{"an Ingress refused by admission shows in Ready", testGenerationRefused},
		{"generation requests Kyverno dropped are repaired", testSkippedRequestsRepaired},
		{"background controller down while the Service is recreated", testBackgroundControllerRestart},
		{"a restart of the background controller writes no VirtualIngress", testRestartWritesNothing},
		{"a VirtualIngress waiting in Kyverno's queue is reported once", testQueuedReportedOnce},
		{"namespace restrictions", testNamespaceRestrictions},
		{"an Ingress deleted by hand comes back", testIngressDeletedByHand},
		{"a request Kyverno never processes does not hold the repair", testOrphanedRequestHoldsNoRepair},
		{"an annotation edited by hand on the Ingress is put back", testIngressAnnotationEditedByHand},
		{"several matches under oldest", testMultipleMatchesOldest},
		{"the release notes name the Kyverno beside it", testKyvernoVersionNoted},
	}
	last := struct {
		name string
		run  func(*testing.T)
	}{"upgrades with every upgrade-safe value, then uninstall", testUpgradesAndUninstall}
	for _, engine := range engines {
		ok := t.Run(engine, func(t *testing.T) {
			install(t, engine)
			all := scenarios
			if routesEngines[engine] {
				all = append(all, routeScenarios...)
			}
			for _, s := range append(all, last) {
				if !t.Run(s.name, s.run) {
					// Later scenarios assume the release and the policies are healthy; stop at the first failure so
					// its logs are the ones printed.
					return
				}
			}
		})
		if !ok {
			return
		}
	}
	t.Run("switching engines keeps every Ingress", testEngineMigration)
}
