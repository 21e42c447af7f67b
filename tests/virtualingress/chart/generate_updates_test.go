package chart

import (
	"context"
	"encoding/json"
	"testing"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	kyvernov2 "github.com/kyverno/kyverno/api/kyverno/v2"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/store"
	"github.com/kyverno/kyverno/pkg/config"
	"github.com/kyverno/kyverno/pkg/engine"
	"github.com/kyverno/kyverno/pkg/engine/adapters"
	engineapi "github.com/kyverno/kyverno/pkg/engine/api"
	"github.com/kyverno/kyverno/pkg/engine/factories"
	"github.com/kyverno/kyverno/pkg/engine/jmespath"
	"github.com/kyverno/kyverno/pkg/engine/policycontext"
	imageverifycache "github.com/kyverno/kyverno/pkg/image/verification/cache"
	"github.com/kyverno/sdk/extensions/registryclient"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

// TestClusterPolicyGeneratesOnTheSameUpdates runs the generate ClusterPolicy through Kyverno's engine as its admission
// controller does for each request (ApplyBackgroundChecks on a policy context built from the admission review), on
// the updates the GeneratingPolicy's matchConditions are tried with: both engines must generate on the same ones. An
// update that generates nothing must leave the rule skipped, never failed: Kyverno answers a failed generate rule with
// a request that deletes the Ingress.
func TestClusterPolicyGeneratesOnTheSameUpdates(t *testing.T) {
	policy := generateClusterPolicy(t)
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

// generateClusterPolicy is the generate ClusterPolicy the chart renders with the clusterPolicy engine.
func generateClusterPolicy(t *testing.T) *kyvernov1.ClusterPolicy {
	t.Helper()
	docs, err := render.Render(chartDir, nil, map[string]any{"policy": map[string]any{"engine": "clusterPolicy"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.Object.GetKind() != "ClusterPolicy" || d.Object.GetName() != "virtual-ingress-generate" {
			continue
		}
		policy := &kyvernov1.ClusterPolicy{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object.Object, policy); err != nil {
			t.Fatal(err)
		}
		return policy
	}
	t.Fatal("no ClusterPolicy virtual-ingress-generate rendered")
	return nil
}

// backgroundCheck is the status of the generate rule for the admission request of c.
func backgroundCheck(t *testing.T, policy *kyvernov1.ClusterPolicy, c updateCase) engineapi.RuleStatus {
	t.Helper()
	request := admissionv1.AdmissionRequest{
		Operation: admissionv1.Operation(c.op),
		Kind:      metav1.GroupVersionKind{Group: viGVK.Group, Version: viGVK.Version, Kind: viGVK.Kind},
		Resource:  metav1.GroupVersionResource{Group: viGVR.Group, Version: viGVR.Version, Resource: viGVR.Resource},
		Namespace: "team-a",
		Name:      "shop",
		UserInfo:  authenticationv1.UserInfo{Username: c.user},
		Object:    rawObject(t, c.obj),
		OldObject: rawObject(t, c.old),
	}
	cfg := config.NewDefaultConfiguration(false)
	cluster := false
	eng := engine.NewEngine(cfg, jmespath.New(cfg), nil,
		factories.DefaultRegistryClientFactory(adapters.RegistryClient(registryclient.New()), nil),
		imageverifycache.DisabledImageVerifyCache(), store.ContextLoaderFactory(&store.Store{}, nil), nil, &cluster)
	pc, err := policycontext.NewPolicyContextFromAdmissionRequest(jmespath.New(cfg), request,
		kyvernov2.RequestInfo{AdmissionUserInfo: request.UserInfo}, viGVK, cfg)
	if err != nil {
		t.Fatal(err)
	}
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
