package chart

import (
	"context"
	"encoding/json"
	"testing"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	engineapi "github.com/kyverno/kyverno/pkg/engine/api"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestClusterPolicyGeneratesOnTheSameUpdates runs the generate ClusterPolicy through Kyverno's engine as its admission
// controller does for each request (ApplyBackgroundChecks on a policy context built from the admission review), on
// the updates the GeneratingPolicy's matchConditions are tried with: both engines must generate on the same ones. An
// update that generates nothing must leave the rule skipped, never failed: Kyverno answers a failed generate rule with
// a request that deletes the Ingress.
func TestClusterPolicyGeneratesOnTheSameUpdates(t *testing.T) {
	policy := clusterPolicy(t, "virtual-ingress-generate", map[string]any{})
	for _, c := range updateCases() {
		status := backgroundCheck(t, policy, c)
		want := engineapi.RuleStatusSkip
		if c.wantMatch {
			want = engineapi.RuleStatusPass
		}
		if status != want {
			t.Errorf("%s: the generate rule is %s, want %s", c.name, status, want)
		}
	}
}

// backgroundCheck is the status of the generate rule for the admission request of c.
func backgroundCheck(t *testing.T, policy *kyvernov1.ClusterPolicy, c updateCase) engineapi.RuleStatus {
	t.Helper()
	eng, pc := engineFor(t, c)
	rules := eng.ApplyBackgroundChecks(context.Background(), pc.WithPolicy(policy)).PolicyResponse.Rules
	if len(rules) != 1 {
		t.Fatalf("%s: %d rule responses, want 1", c.name, len(rules))
	}
	return rules[0].Status()
}

func rawObject(t *testing.T, u *unstructured.Unstructured) runtime.RawExtension {
	t.Helper()
	if u == nil {
		return runtime.RawExtension{}
	}
	raw, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: raw}
}
