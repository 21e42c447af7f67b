//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	startStatusController(t, nil)
	waitAdmissionPoliciesEnforced(t)
	t.Logf("chart installed with policy.engine=%s, policies ready in %s", engine, time.Since(start).Round(time.Millisecond))
}

// waitAdmissionPoliciesEnforced waits until the API server enforces the chart's ValidatingAdmissionPolicies: it loads
// them asynchronously after they are created, so the first writes after an install may pass unchecked. A server-side
// dry run of a VirtualIngress with a denied annotation is refused once they are in force.
func waitAdmissionPoliciesEnforced(t *testing.T) {
	t.Helper()
	probe := virtualingress.New("default", "admission-probe", virtualingress.CoderSpec(relayLabels()))
	probe.SetAnnotations(map[string]string{"nginx.ingress.kubernetes.io/server-snippet": "probe"})
	eventually(t, "the chart's admission policies to be enforced", func() (bool, string, error) {
		_, err := env.dyn.Resource(virtualIngressGVR).Namespace("default").Create(context.Background(), probe,
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "is not allowed on a VirtualIngress"), errString(err), nil
	})
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

// waitEnginePolicies waits until the chart's policies are exactly those of the engine: the other engine's are gone.
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
		return len(names) == 4, fmt.Sprint(names), nil
	})
}
