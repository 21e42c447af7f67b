package main

import (
	"fmt"
	"strings"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	engineapi "github.com/kyverno/kyverno/pkg/engine/api"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/kyvernosim"
)

// admission is the outcome of creating one VirtualIngress.
type admission struct {
	stored    *unstructured.Unstructured   // the VirtualIngress as mutated, i.e. as the API server would store it
	generated []*unstructured.Unstructured // what the generate rules create for it
}

// admitCreate runs the policies on a CREATE of vi like `kyverno test` does: mutate rules in policy order, each on
// the result of the previous ones, then generate rules on the mutated object. A rule error is returned: the
// webhook (failurePolicy Fail) would reject the write, and a preview without it would show a wrong result.
func admitCreate(policies []kyvernov1.PolicyInterface, c kyvernosim.Cluster, vi *unstructured.Unstructured) (admission, error) {
	responses, resource, err := kyvernosim.Apply(policies, c, vi, kyvernov1.Create)
	if err != nil {
		return admission{}, err
	}
	result := admission{stored: resource}
	var problems []string
	for _, r := range responses {
		for _, rule := range r.PolicyResponse.Rules {
			if rule.Status() == engineapi.RuleStatusError || rule.Status() == engineapi.RuleStatusFail {
				problems = append(problems, fmt.Sprintf("policy %s rule %s: %s: %s", r.Policy().GetName(), rule.Name(), rule.Status(), rule.Message()))
			}
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
