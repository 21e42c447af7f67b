package main

import (
	"fmt"
	"strings"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	engineapi "github.com/kyverno/kyverno/pkg/engine/api"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kyvernosim"
)

// admission is the outcome of creating (or updating) one source object.
type admission struct {
	stored    *unstructured.Unstructured   // the object as mutated, i.e. as the API server would store it
	generated []*unstructured.Unstructured // what the generate rules / GeneratingPolicies create for it
}

// simCluster is what the policies of either engine see: the fake cluster, and its Namespaces for the CEL engines'
// namespaceSelector.
type simCluster struct {
	cluster    kyvernosim.Cluster
	namespaces []*unstructured.Unstructured
}

// admit runs the chart's policies for obj's kind, of whichever engine it renders, on one write of obj.
func admit(parts chartParts, c simCluster, obj *unstructured.Unstructured, operation kyvernov1.AdmissionOperation) (admission, error) {
	s, err := parts.forKind(obj.GroupVersionKind())
	if err != nil {
		return admission{}, err
	}
	if len(s.policies) > 0 {
		return admitClusterPolicies(s.policies, c.cluster, obj, operation)
	}
	return admitCEL(s.cel, c, obj, operation)
}

// admitClusterPolicies runs the policies on a write of obj like `kyverno test` does: mutate rules in policy order,
// each on the result of the previous ones, then generate rules on the mutated object. A rule error is returned: the
// webhook (failurePolicy Fail) would reject the write, and a preview without it would show a wrong result.
func admitClusterPolicies(policies []kyvernov1.PolicyInterface, c kyvernosim.Cluster, obj *unstructured.Unstructured, operation kyvernov1.AdmissionOperation) (admission, error) {
	responses, resource, err := kyvernosim.Apply(policies, c, obj, operation)
	if err != nil {
		return admission{}, err
	}
	result := admission{stored: resource}
	var problems []string
	for _, r := range responses {
		problems = append(problems, ruleProblems(r)...)
		for _, rule := range r.PolicyResponse.Rules {
			result.generated = append(result.generated, rule.GeneratedResources()...)
		}
		if r.PatchedResource.Object != nil && r.Policy().AsKyvernoPolicy() != nil && r.Policy().AsKyvernoPolicy().GetSpec().HasMutate() {
			result.stored = &r.PatchedResource
		}
	}
	if len(problems) > 0 {
		return admission{}, fmt.Errorf("the policies fail on it:\n  %s", strings.Join(problems, "\n  "))
	}
	return result, nil
}

// admitCEL is the same for the CEL engine: the MutatingPolicies, then the GeneratingPolicies on the mutated object.
func admitCEL(policies kyvernosim.CELPolicies, c simCluster, obj *unstructured.Unstructured, operation kyvernov1.AdmissionOperation) (admission, error) {
	res, err := kyvernosim.ApplyCEL(policies, c.cluster, c.namespaces, obj, operation)
	if err != nil {
		return admission{}, err
	}
	result := admission{stored: res.Patched}
	var problems []string
	for _, r := range append(append([]engineapi.EngineResponse{}, res.Mutating...), res.Generating...) {
		problems = append(problems, ruleProblems(r)...)
	}
	for _, r := range res.Generating {
		for _, rule := range r.PolicyResponse.Rules {
			result.generated = append(result.generated, rule.GeneratedResources()...)
		}
	}
	if len(problems) > 0 {
		return admission{}, fmt.Errorf("the policies fail on it:\n  %s", strings.Join(problems, "\n  "))
	}
	return result, nil
}

func ruleProblems(r engineapi.EngineResponse) []string {
	var problems []string
	for _, rule := range r.PolicyResponse.Rules {
		if rule.Status() == engineapi.RuleStatusError || rule.Status() == engineapi.RuleStatusFail {
			problems = append(problems, fmt.Sprintf("policy %s rule %s: %s: %s", r.Policy().GetName(), rule.Name(), rule.Status(), rule.Message()))
		}
	}
	return problems
}
