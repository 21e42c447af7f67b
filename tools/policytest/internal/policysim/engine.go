package policysim

import (
	"fmt"
	"strings"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	engineapi "github.com/kyverno/kyverno/pkg/engine/api"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kyvernosim"
)

// Admission is the outcome of creating (or updating) one source object.
type Admission struct {
	Stored    *unstructured.Unstructured   // the object as mutated, i.e. as the API server would store it
	Generated []*unstructured.Unstructured // what the generate rules / GeneratingPolicies create for it
}

// Cluster is what the policies of either engine see: the fake cluster, and its Namespaces for the CEL engines'
// namespaceSelector.
type Cluster struct {
	cluster    kyvernosim.Cluster
	namespaces []*unstructured.Unstructured
}

// Admit runs the chart's policies for obj's kind, of whichever engine it renders, on one write of obj.
func Admit(parts ChartParts, c Cluster, obj *unstructured.Unstructured, operation kyvernov1.AdmissionOperation) (Admission, error) {
	s, err := parts.forKind(obj.GroupVersionKind())
	if err != nil {
		return Admission{}, err
	}
	if len(s.policies) > 0 {
		return admitClusterPolicies(s.policies, c.cluster, obj, operation)
	}
	return admitCEL(s.cel, c, obj, operation)
}

// admitClusterPolicies runs the policies on a write of obj like `kyverno test` does: mutate rules in policy order,
// each on the result of the previous ones, then generate rules on the mutated object. A rule error is returned: the
// webhook (failurePolicy Fail) would reject the write, and a preview without it would show a wrong result.
func admitClusterPolicies(policies []kyvernov1.PolicyInterface, c kyvernosim.Cluster, obj *unstructured.Unstructured, operation kyvernov1.AdmissionOperation) (Admission, error) {
	responses, resource, err := kyvernosim.Apply(policies, c, obj, operation)
	if err != nil {
		return Admission{}, err
	}
	result := Admission{Stored: resource}
	var problems []string
	for _, r := range responses {
		problems = append(problems, ruleProblems(r)...)
		for _, rule := range r.PolicyResponse.Rules {
			result.Generated = append(result.Generated, rule.GeneratedResources()...)
		}
		if r.PatchedResource.Object != nil && r.Policy().AsKyvernoPolicy() != nil && r.Policy().AsKyvernoPolicy().GetSpec().HasMutate() {
			result.Stored = &r.PatchedResource
		}
	}
	if len(problems) > 0 {
		return Admission{}, fmt.Errorf("the policies fail on it:\n  %s", strings.Join(problems, "\n  "))
	}
	return result, nil
}

// admitCEL is the same for the CEL engine: the MutatingPolicies, then the GeneratingPolicies on the mutated object.
func admitCEL(policies kyvernosim.CELPolicies, c Cluster, obj *unstructured.Unstructured, operation kyvernov1.AdmissionOperation) (Admission, error) {
	res, err := kyvernosim.ApplyCEL(policies, c.cluster, c.namespaces, obj, operation)
	if err != nil {
		return Admission{}, err
	}
	result := Admission{Stored: res.Patched}
	var problems []string
	for _, r := range append(append([]engineapi.EngineResponse{}, res.Mutating...), res.Generating...) {
		problems = append(problems, ruleProblems(r)...)
	}
	for _, r := range res.Generating {
		for _, rule := range r.PolicyResponse.Rules {
			result.Generated = append(result.Generated, rule.GeneratedResources()...)
		}
	}
	if len(problems) > 0 {
		return Admission{}, fmt.Errorf("the policies fail on it:\n  %s", strings.Join(problems, "\n  "))
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

// WithoutKyvernoBookkeeping is o without the labels Kyverno puts on what it generates (generate.kyverno.io/* and
// app.kubernetes.io/managed-by), which the two engines do not set alike in the CLI: what is left is what the chart's
// policies made, to compare between engines.
func WithoutKyvernoBookkeeping(o *unstructured.Unstructured) *unstructured.Unstructured {
	o = o.DeepCopy()
	labels := o.GetLabels()
	for k := range labels {
		if strings.HasPrefix(k, "generate.kyverno.io/") || k == "app.kubernetes.io/managed-by" {
			delete(labels, k)
		}
	}
	if len(labels) == 0 {
		unstructured.RemoveNestedField(o.Object, "metadata", "labels")
	} else {
		o.SetLabels(labels)
	}
	return o
}
