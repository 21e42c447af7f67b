//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

// ruleNameLabel is set by the ClusterPolicy engine's generate rule and not by the GeneratingPolicy: which engine last
// wrote an Ingress shows in it.
const ruleNameLabel = "generate.kyverno.io/rule-name"

// testEngineMigration installs the clusterPolicy engine, lets it generate Ingresses, then switches policy.engine with
// `helm upgrade` to generatingPolicy and back. Every Ingress in the cluster must survive each switch with its UID, be
// taken over by the new engine, and keep following its Services afterwards.
func testEngineMigration(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	install(t, policyengine.ClusterPolicy)
	ns := newNamespace(t, "e2e-migrate")
	service, _ := resolvedCoder(t, ns)
	createService(t, ns, "grafana-mirror", map[string]string{"app": "grafana"})
	createVirtualIngress(t, virtualIngress(ns, "grafana", virtualingress.CoderSpec(map[string]string{"app": "grafana"})))
	waitIngressServices(t, ns, virtualingress.GeneratedName("grafana"), "grafana-mirror")
	waitManagedBy(t, ns, virtualingress.GeneratedName("coder"), policyengine.ClusterPolicy)

	// A generate ClusterPolicy that deletes its Ingresses when removed must not be switched away from: the chart
	// refuses, before changing anything.
	upgrade(t, map[string]any{"policy": map[string]any{"orphanIngressesOnUninstall": false}})
	refused := generatedIngressUIDs(t)
	err := env.helm.Upgrade(context.Background(), map[string]any{"policy": map[string]any{"engine": policyengine.GeneratingPolicy, "orphanIngressesOnUninstall": false}})
	if err == nil || !strings.Contains(err.Error(), "orphanIngressesOnUninstall=true") {
		t.Fatalf("switching engines with orphanIngressesOnUninstall=false: got %v, want the chart's refusal", err)
	}
	waitEnginePolicies(t, policyengine.ClusterPolicy)
	assertIngressesKept(t, "a refused switch", refused)
	// What the refusal asks for: orphaning first, with the current engine.
	upgrade(t, nil)

	for _, to := range []string{policyengine.GeneratingPolicy, policyengine.ClusterPolicy} {
		before := generatedIngressUIDs(t)
		env.engine = to
		upgrade(t, nil)
		waitEnginePolicies(t, to)
		waitUpdateRequestsDrained(t)
		assertIngressesKept(t, "switching to "+to, before)

		// Still in sync: a recreated Service is followed under the new engine, by the same Ingress, which the new
		// engine then holds: same name, same policy name, same trigger UID. (Its generateExisting may have adopted
		// it already; Kyverno 1.19's GeneratingPolicy does not when its background controller started before the
		// CRDs, as in a suite run alone.)
		next := ccmName(t)
		deleteService(t, ns, service)
		createService(t, ns, next, relayLabels())
		waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), next)
		waitManagedBy(t, ns, virtualingress.GeneratedName("coder"), to)
		waitReady(t, ns, "coder", "True", "IngressUpToDate")
		assertIngressesKept(t, "recreating a Service after switching to "+to, before)
		service = next
	}
	if err := env.helm.Uninstall(); err != nil {
		t.Fatal(err)
	}
}

// waitManagedBy waits until the Ingress was last written by the given engine's generate policy.
func waitManagedBy(t *testing.T, ns, name, engine string) {
	t.Helper()
	eventually(t, fmt.Sprintf("Ingress %s/%s written by the %s engine", ns, name, engine), func() (bool, string, error) {
		ing, err := getIngress(ns, name)
		if err != nil {
			return false, "", err
		}
		_, byClusterPolicy := ing.Labels[ruleNameLabel]
		return byClusterPolicy == (engine == policyengine.ClusterPolicy), fmt.Sprint(ing.Labels), nil
	})
}
