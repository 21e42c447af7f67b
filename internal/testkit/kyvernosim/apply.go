package kyvernosim

import (
	"io"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	kyvernotest "github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/commands/test"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/processor"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/store"
	engineapi "github.com/kyverno/kyverno/pkg/engine/api"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Apply runs the policies on one admission request for resource (operation CREATE, UPDATE or DELETE; for UPDATE the
// old object is the resource itself, as in `kyverno test`) and returns Kyverno's engine responses: patched resources,
// generated resources and, for mutate-existing rules, the patched targets loaded from the cluster.
func Apply(policies []kyvernov1.PolicyInterface, c Cluster, resource *unstructured.Unstructured, operation kyvernov1.AdmissionOperation) ([]engineapi.EngineResponse, *unstructured.Unstructured, error) {
	var st store.Store
	st.SetLocal(true)
	st.AllowApiCall(true)
	if err := setGlobalContext(&st, policies, c); err != nil {
		return nil, nil, err
	}
	// The CLI turns every number into a float64 before evaluating (JMESPath compares float64s); do the same so the
	// policies see exactly what they see in `kyverno test`.
	r := kyvernotest.ProcessResources([]*unstructured.Unstructured{resource.DeepCopy()})[0]
	pp := processor.PolicyProcessor{
		Store:      &st,
		Policies:   policies,
		Resource:   *r,
		Operation:  string(operation),
		Rc:         &processor.ResultCounts{},
		Cluster:    true,
		Client:     c.Client,
		RESTMapper: c.RESTMapper,
		Out:        io.Discard,
	}
	responses, err := pp.ApplyPoliciesOnResource()
	return responses, r, err
}
