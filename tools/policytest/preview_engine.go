package main

import (
	"fmt"
	"io"
	"strings"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	kyvernotest "github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/commands/test"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/processor"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/store"
	"github.com/kyverno/kyverno/ext/cluster"
	"github.com/kyverno/kyverno/pkg/clients/dclient"
	engineapi "github.com/kyverno/kyverno/pkg/engine/api"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// fakeCluster is what the policies' apiCalls see: the user's Services and Namespaces, like the clusterResources of
// `kyverno test`. Its lists are per namespace, like the API server's, so a VirtualIngress only finds Services of
// its own namespace.
type fakeCluster struct {
	client     dclient.Interface
	restMapper meta.RESTMapper
}

// newFakeCluster registers its kinds up front rather than from the objects (as the CLI's fake cluster does): with
// no Service given, a list of Services must return nothing, not panic in the fake client.
func newFakeCluster(crd *apiextensionsv1.CustomResourceDefinition, objects []*unstructured.Unstructured) fakeCluster {
	kinds := map[schema.GroupVersionResource]schema.GroupVersionKind{
		{Version: "v1", Resource: "services"}:                                serviceGVK,
		{Version: "v1", Resource: "namespaces"}:                              namespaceGVK,
		virtualIngressGVK.GroupVersion().WithResource(crd.Spec.Names.Plural): virtualIngressGVK,
	}
	scheme := runtime.NewScheme()
	listKinds := map[schema.GroupVersionResource]string{}
	disco := dclient.NewFakeDiscoveryClient(nil)
	for gvr, gvk := range kinds {
		scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
		scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
		listKinds[gvr] = gvk.Kind + "List"
		disco.AddGVRToGVKMapping(gvr, gvk)
	}
	objs := make([]runtime.Object, 0, len(objects))
	for _, o := range objects {
		objs = append(objs, o.DeepCopy())
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, listKinds, objs...)
	client := dclient.NewFakeClientWithDisco(dyn, kubefake.NewClientset(), disco)
	restMapper := cluster.NewFake().RESTMapper([]*apiextensionsv1.CustomResourceDefinition{crd})
	return fakeCluster{client: client, restMapper: restMapper}
}

// admission is the outcome of creating one VirtualIngress.
type admission struct {
	stored    *unstructured.Unstructured   // the VirtualIngress as mutated, i.e. as the API server would store it
	generated []*unstructured.Unstructured // what the generate rules create for it
}

// admitCreate runs the policies on a CREATE of vi like `kyverno test` does: mutate rules in policy order, each on
// the result of the previous ones, then generate rules on the mutated object. A rule error is returned: the
// webhook (failurePolicy Fail) would reject the write, and a preview without it would show a wrong result.
func admitCreate(policies []kyvernov1.PolicyInterface, fc fakeCluster, vi *unstructured.Unstructured) (admission, error) {
	var st store.Store
	st.SetLocal(true)
	st.AllowApiCall(true)
	// The CLI turns every number into a float64 before evaluating (JMESPath compares float64s); do the same so the
	// policies see exactly what they see in `kyverno test`.
	resource := kyvernotest.ProcessResources([]*unstructured.Unstructured{vi.DeepCopy()})[0]
	pp := processor.PolicyProcessor{
		Store:      &st,
		Policies:   policies,
		Resource:   *resource,
		Operation:  string(kyvernov1.Create),
		Rc:         &processor.ResultCounts{},
		Cluster:    true,
		Client:     fc.client,
		RESTMapper: fc.restMapper,
		Out:        io.Discard,
	}
	responses, err := pp.ApplyPoliciesOnResource()
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
