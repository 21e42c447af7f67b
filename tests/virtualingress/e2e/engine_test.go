//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

// install is `helm install` of the chart with policy.engine=engine; it waits until Kyverno reports every policy ready.
func install(t *testing.T, engine string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env.engine = engine
	start := time.Now()
	release, err := env.cluster.InstallRepoChartWithValues(ctx, env.repoRoot, "virtual-ingress", withEngine(nil))
	if err != nil {
		t.Fatal(err)
	}
	env.helm = release
	startStatusController(t)
	waitAdmissionPoliciesEnforced(t)
	t.Logf("chart installed with policy.engine=%s, policies ready in %s", engine, time.Since(start).Round(time.Millisecond))
}

// waitAdmissionPoliciesEnforced waits until the chart's admission chain (Kyverno's policies, their informer of
// Services, the ValidatingAdmissionPolicies) is in force: the first writes after an install could otherwise pass
// unchecked or fail.
func waitAdmissionPoliciesEnforced(t *testing.T) {
	t.Helper()
	if err := virtualingress.WaitAdmissionReady(context.Background(), env.dyn, convergeTimeout); err != nil {
		t.Fatal(err)
	}
}

// withEngine adds policy.engine=env.engine to a set of values, keeping the other policy values given.
func withEngine(values map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range values {
		out[k] = v
	}
	policy := map[string]any{}
	if given, ok := out["policy"].(map[string]any); ok {
		for k, v := range given {
			policy[k] = v
		}
	}
	if _, set := policy["engine"]; !set {
		policy["engine"] = env.engine
	}
	out["policy"] = policy
	return out
}

// chartPolicies lists the chart's Kyverno policies of every kind as resource/name.
func chartPolicies(t *testing.T) []string {
	t.Helper()
	names, err := env.cluster.Policies(context.Background(), policyengine.PolicySelector)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// waitEnginePolicies waits until the chart's policies are exactly those of the engine (four per kind it serves): the
// other engine's are gone.
func waitEnginePolicies(t *testing.T, engine string) {
	t.Helper()
	want := map[string]bool{policyengine.ClusterPolicy: true}
	eventually(t, "only "+engine+" policies present", func() (bool, string, error) {
		names := chartPolicies(t)
		for _, n := range names {
			isClusterPolicy := strings.HasPrefix(n, "clusterpolicies/")
			if isClusterPolicy != want[engine] {
				return false, fmt.Sprint(names), nil
			}
		}
		want := 4
		if routesEngines[engine] {
			want += 4
		}
		return len(names) == want, fmt.Sprint(names), nil
	})
}
