package kyvernosim

import (
	"fmt"
	"io"

	policiesv1beta1 "github.com/kyverno/api/api/policies.kyverno.io/v1beta1"
	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/apis/v1alpha1"
	kyvernotest "github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/commands/test"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/processor"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/store"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/variables"
	engineapi "github.com/kyverno/kyverno/pkg/engine/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// CELPolicies are Kyverno's CEL policies (policies.kyverno.io), as the CLI's loader returns them.
type CELPolicies struct {
	Mutating   []policiesv1beta1.MutatingPolicyLike
	Generating []policiesv1beta1.GeneratingPolicyLike
}

// CELResult is the outcome of one admission request under CEL policies.
type CELResult struct {
	// Mutating holds one response per MutatingPolicy that matched; Generating one per GeneratingPolicy that
	// evaluated (its rule carries the generated resources).
	Mutating   []engineapi.EngineResponse
	Generating []engineapi.EngineResponse
	// Patched is the resource after every MutatingPolicy, i.e. as the API server would store it.
	Patched *unstructured.Unstructured
}

// ApplyCEL runs CEL policies on one admission request for resource the way `kyverno test` does, through the CLI's
// own policy processor (Kyverno's mpol and gpol engines): the MutatingPolicies first, then the GeneratingPolicies
// on the mutated object, as Kyverno's admission controller hands the stored object to the background controller.
// namespaces are the cluster's Namespace objects: CEL policies match namespaceSelector against their labels.
//
// The two stages see the cluster differently, exactly as the project's kyverno test suites do:
//   - MutatingPolicies go through the CLI's cluster context provider (what a suite with clusterResources gets), so
//     resource.List reads the cluster.
//   - GeneratingPolicies go through the CLI's fake context provider (a suite without clusterResources). The cluster
//     provider, in CLI evaluation, deletes the annotations of every generated resource (kyverno
//     pkg/cel/libs/context.go, GenerateResources), which the admission and background controllers do not do; the
//     fake one keeps the object exactly as generator.Apply received it. resource.Get / resource.List in a
//     GeneratingPolicy therefore find nothing here.
func ApplyCEL(p CELPolicies, c Cluster, namespaces []*unstructured.Unstructured, resource *unstructured.Unstructured, operation kyvernov1.AdmissionOperation) (CELResult, error) {
	vars, err := namespaceVariables(namespaces)
	if err != nil {
		return CELResult{}, err
	}
	// As in Apply: numbers as float64, like the CLI does before evaluating.
	r := kyvernotest.ProcessResources([]*unstructured.Unstructured{resource.DeepCopy()})[0]
	result := CELResult{Patched: r}
	if len(p.Mutating) > 0 {
		responses, err := celProcessor(c, vars, *r, operation, true, func(pp *processor.PolicyProcessor) {
			pp.MutatingPolicies = p.Mutating
		}).ApplyPoliciesOnResource()
		if err != nil {
			return CELResult{}, err
		}
		for _, resp := range responses {
			result.Mutating = append(result.Mutating, resp)
			patched := resp.PatchedResource
			result.Patched = &patched
		}
	}
	if len(p.Generating) > 0 {
		responses, err := celProcessor(c, vars, *result.Patched, operation, false, func(pp *processor.PolicyProcessor) {
			pp.GeneratingPolicies = p.Generating
		}).ApplyPoliciesOnResource()
		if err != nil {
			return CELResult{}, err
		}
		result.Generating = responses
	}
	return result, nil
}

func celProcessor(c Cluster, vars *variables.Variables, resource unstructured.Unstructured, operation kyvernov1.AdmissionOperation, cluster bool, set func(*processor.PolicyProcessor)) *processor.PolicyProcessor {
	var st store.Store
	st.SetLocal(true)
	st.AllowApiCall(cluster)
	pp := &processor.PolicyProcessor{
		Store:      &st,
		Resource:   resource,
		Operation:  string(operation),
		Variables:  vars,
		Rc:         &processor.ResultCounts{},
		Cluster:    cluster,
		RESTMapper: c.RESTMapper,
		Out:        io.Discard,
	}
	if cluster {
		pp.Client = c.Client
	}
	set(pp)
	return pp
}

// namespaceVariables gives the CEL engines the cluster's Namespaces (they resolve namespaceSelector through the
// CLI's values, not the cluster), with the kubernetes.io/metadata.name label the API server sets on every Namespace.
func namespaceVariables(namespaces []*unstructured.Unstructured) (*variables.Variables, error) {
	var values v1alpha1.ValuesSpec
	for _, o := range namespaces {
		if o.GroupVersionKind() != NamespaceGVK {
			continue
		}
		var ns corev1.Namespace
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &ns); err != nil {
			return nil, fmt.Errorf("namespace %s: %w", o.GetName(), err)
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
		values.Namespaces = append(values.Namespaces, ns)
	}
	return variables.New(io.Discard, nil, "", "", &values)
}

// ApplyCELMutateExisting runs the mutate-existing MutatingPolicies of p on one admission request for trigger, over
// the given target candidates, through the CLI's policy processor: the policy's targetMatchConstraints expression
// lists the targets in c (c must hold them), its targetMatchConditions pick among them. Each passing rule of the
// responses carries its patched target (RuleResponse.PatchedTarget).
func ApplyCELMutateExisting(p CELPolicies, c Cluster, namespaces []*unstructured.Unstructured, trigger *unstructured.Unstructured, targets []*unstructured.Unstructured, operation kyvernov1.AdmissionOperation) ([]engineapi.EngineResponse, error) {
	vars, err := namespaceVariables(namespaces)
	if err != nil {
		return nil, err
	}
	r := kyvernotest.ProcessResources([]*unstructured.Unstructured{trigger.DeepCopy()})[0]
	return celProcessor(c, vars, *r, operation, true, func(pp *processor.PolicyProcessor) {
		pp.MutatingPolicies = p.Mutating
		pp.TargetResources = targets
	}).ApplyPoliciesOnResource()
}
