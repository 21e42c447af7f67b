package policies

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/policy"
	engineapi "github.com/kyverno/kyverno/pkg/engine/api"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kyvernosim"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

const root = "../../.."

// The targets: coder selects relay-family; relay-legacy's status names 7d3e... (the Service it last resolved to);
// wiki selects a Service that does not exist.
var targets = []string{
	"fixtures/examples/virtualingresses.yaml",
	"fixtures/virtualingresses/updates/service-gone.yaml",
	"fixtures/virtualingresses/no-match.yaml",
}

// serviceEvents runs one engine's service-events policy for an admission request of a Service over the cluster
// (which holds the target VirtualIngresses) and returns the responses, whose passing rules carry the patched targets.
type serviceEvents func(t *testing.T, cluster kyvernosim.Cluster, objects []*unstructured.Unstructured, service *unstructured.Unstructured, op kyvernov1.AdmissionOperation) []engineapi.EngineResponse

// engines are the chart's two implementations of the service-events policy, as rendered into policies/.
func engines(t *testing.T) map[string]serviceEvents {
	clusterPolicies := loadPolicies(t, "policies/virtual-ingress/clusterpolicy/virtual-ingress-service-events.yaml").Policies
	cel := loadPolicies(t, "policies/virtual-ingress/generatingpolicy/virtual-ingress-service-events.yaml")
	return map[string]serviceEvents{
		policyengine.ClusterPolicy: func(t *testing.T, c kyvernosim.Cluster, _ []*unstructured.Unstructured, svc *unstructured.Unstructured, op kyvernov1.AdmissionOperation) []engineapi.EngineResponse {
			responses, _, err := kyvernosim.Apply(clusterPolicies, c, svc, op)
			if err != nil {
				t.Fatal(err)
			}
			return responses
		},
		policyengine.GeneratingPolicy: func(t *testing.T, c kyvernosim.Cluster, objects []*unstructured.Unstructured, svc *unstructured.Unstructured, op kyvernov1.AdmissionOperation) []engineapi.EngineResponse {
			var targets []*unstructured.Unstructured
			for _, o := range objects {
				if o.GetKind() == "VirtualIngress" {
					targets = append(targets, o)
				}
			}
			responses, err := kyvernosim.ApplyCELMutateExisting(kyvernosim.CELPolicies{Mutating: cel.MutatingPolicies}, c, objects, svc, targets, op)
			if err != nil {
				t.Fatal(err)
			}
			return responses
		},
	}
}

func TestServiceEventsTouchOnlyConcernedVirtualIngresses(t *testing.T) {
	cases := []struct {
		name      string
		service   string
		operation kyvernov1.AdmissionOperation
		touched   []string
		event     string
	}{
		{"matching Service created", "fixtures/services/relay-family-recreated.yaml", kyvernov1.Create,
			[]string{"coder"}, "CREATE Service a18c2be1873b84bcd8630e79298a07cf (resourceVersion 4711)"},
		{"Service in use relabelled away from the selector", "fixtures/services/in-use-relabelled.yaml", kyvernov1.Update,
			[]string{"relay-legacy"}, "UPDATE Service 7d3e5f1a9b8c4d2e6f0a1b2c3d4e5f60 (resourceVersion 5120)"},
		{"Service in use deleted", "fixtures/services/in-use-relabelled.yaml", kyvernov1.Delete,
			[]string{"relay-legacy"}, "DELETE Service 7d3e5f1a9b8c4d2e6f0a1b2c3d4e5f60 (resourceVersion 5120)"},
		{"unrelated Service created", "fixtures/services/unrelated.yaml", kyvernov1.Create, nil, ""},
	}
	crd := loadCRD(t)
	for engine, apply := range engines(t) {
		for _, tc := range cases {
			if engine == policyengine.GeneratingPolicy && tc.operation == kyvernov1.Delete {
				// Kyverno's CLI also applies a mutate-existing MutatingPolicy's patch to the trigger itself (the webhook
				// does not), and on a DELETE, whose object is empty, its JSON patcher panics. The CEL engine's Service
				// deletion is proven on a cluster instead: the e2e scenario "Service recreated under a new name" (Stale after the delete).
				continue
			}
			t.Run(engine+"/"+tc.name, func(t *testing.T) {
				var objects []*unstructured.Unstructured
				for _, f := range targets {
					objects = append(objects, loadObject(t, f))
				}
				objects = append(objects, namespace("tenant-root"))
				cluster, err := kyvernosim.NewCluster([]*apiextensionsv1.CustomResourceDefinition{crd}, objects)
				if err != nil {
					t.Fatal(err)
				}
				service := loadObject(t, tc.service)
				touched := touchedTargets(t, apply(t, cluster, objects, service, tc.operation))
				var names []string
				// What the resolve policy checks Kyverno's informer against.
				wantEvent := map[string]any{"operation": string(tc.operation), "name": service.GetName(), "uid": string(service.GetUID()), "resourceVersion": service.GetResourceVersion()}
				for name, target := range touched {
					names = append(names, name)
					if event, _, _ := unstructured.NestedString(target.Object, "status", "lastServiceEvent"); event != tc.event {
						t.Errorf("%s: lastServiceEvent %q, want %q", name, event, tc.event)
					}
					if event, _, _ := unstructured.NestedMap(target.Object, "status", "serviceEvent"); !reflect.DeepEqual(event, wantEvent) {
						t.Errorf("%s: serviceEvent %v, want %v", name, event, wantEvent)
					}
				}
				sort.Strings(names)
				if len(names) != len(tc.touched) || (len(names) > 0 && names[0] != tc.touched[0]) {
					t.Fatalf("touched %v, want %v", names, tc.touched)
				}
			})
		}
	}
}

// A Service that no VirtualIngress selects or uses must not even make an UpdateRequest: under the ClusterPolicy engine
// the rule is skipped when the Service is written (its preconditions read Kyverno's informer of VirtualIngresses), so
// that a burst of such Services cannot fill Kyverno's queue.
func TestServiceEventsSkipUnconcernedServicesAtAdmission(t *testing.T) {
	policies := loadPolicies(t, "policies/virtual-ingress/clusterpolicy/virtual-ingress-service-events.yaml").Policies
	var objects []*unstructured.Unstructured
	for _, f := range targets {
		objects = append(objects, loadObject(t, f))
	}
	cluster, err := kyvernosim.NewCluster([]*apiextensionsv1.CustomResourceDefinition{loadCRD(t)}, append(objects, namespace("tenant-root")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		service string
		want    engineapi.RuleStatus
	}{
		{"fixtures/services/unrelated.yaml", engineapi.RuleStatusSkip},
		{"fixtures/services/relay-family-recreated.yaml", engineapi.RuleStatusPass},
	} {
		responses, _, err := kyvernosim.Apply(policies, cluster, loadObject(t, tc.service), kyvernov1.Create)
		if err != nil {
			t.Fatal(err)
		}
		var got []engineapi.RuleStatus
		for _, r := range responses {
			for _, rule := range r.PolicyResponse.Rules {
				got = append(got, rule.Status())
			}
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: rule results %v, want one %s", tc.service, got, tc.want)
		}
	}
}

// A VirtualIngress created milliseconds before its Service (a GitOps sync) may not be in Kyverno's informer when the
// Service is created; its own resolution found no Service. The rule then asks the API server, and touches it.
func TestServiceEventsFindAVirtualIngressTheInformerHasNotSeen(t *testing.T) {
	policies := loadPolicies(t, "policies/virtual-ingress/clusterpolicy/virtual-ingress-service-events.yaml").Policies
	var objects []*unstructured.Unstructured
	for _, f := range targets {
		objects = append(objects, loadObject(t, f))
	}
	cluster, err := kyvernosim.NewCluster([]*apiextensionsv1.CustomResourceDefinition{loadCRD(t)}, append(objects, namespace("tenant-root")))
	if err != nil {
		t.Fatal(err)
	}
	stale := cluster.WithVirtualIngressesCache([]*unstructured.Unstructured{})
	for _, tc := range []struct {
		service string
		want    engineapi.RuleStatus
	}{
		{"fixtures/services/unrelated.yaml", engineapi.RuleStatusSkip},
		{"fixtures/services/relay-family-recreated.yaml", engineapi.RuleStatusPass},
	} {
		responses, _, err := kyvernosim.Apply(policies, stale, loadObject(t, tc.service), kyvernov1.Create)
		if err != nil {
			t.Fatal(err)
		}
		var got []engineapi.RuleStatus
		for _, r := range responses {
			for _, rule := range r.PolicyResponse.Rules {
				got = append(got, rule.Status())
			}
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: rule results %v, want one %s", tc.service, got, tc.want)
		}
	}
}

// touchedTargets maps the name of each target a passing rule patched to the patched target.
func touchedTargets(t *testing.T, responses []engineapi.EngineResponse) map[string]*unstructured.Unstructured {
	t.Helper()
	touched := map[string]*unstructured.Unstructured{}
	for _, r := range responses {
		for _, rule := range r.PolicyResponse.Rules {
			switch rule.Status() {
			case engineapi.RuleStatusError, engineapi.RuleStatusFail:
				t.Fatalf("rule %s: %s: %s", rule.Name(), rule.Status(), rule.Message())
			case engineapi.RuleStatusPass:
				target, _, _ := rule.PatchedTarget()
				if target == nil && r.Policy().GetKind() == "MutatingPolicy" {
					// The CLI's evaluation of the MutatingPolicy on the Service itself (see above), not a target.
					continue
				}
				if target == nil {
					t.Fatalf("rule %s passed without a patched target", rule.Name())
				}
				touched[target.GetName()] = target
			}
		}
	}
	return touched
}

func loadPolicies(t *testing.T, file string) *policy.LoaderResults {
	t.Helper()
	results, err := policy.Load(nil, "", filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	if len(results.Policies)+len(results.MutatingPolicies) == 0 {
		t.Fatalf("%s: no policy", file)
	}
	return results
}

func loadCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "charts/virtual-ingress/files/crds/virtual-ingress.io_virtualingresses.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func loadObject(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

func namespace(name string) *unstructured.Unstructured {
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(kyvernosim.NamespaceGVK)
	ns.SetName(name)
	return ns
}
