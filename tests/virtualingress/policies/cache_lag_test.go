package policies

import (
	"testing"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	engineapi "github.com/kyverno/kyverno/pkg/engine/api"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kyvernosim"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// The resolve rule reads Services from Kyverno's informer (a GlobalContextEntry) and lists them from the API server
// only when the informer has not seen the Service change that triggered the write (status.serviceEvent). In each case
// the source the rule must not read holds one more matching Service (or an old one), so reading it would resolve to
// a different Service or to MultipleMatches. The CEL engine's twin is proven on a cluster (e2e): Kyverno's CLI gives
// MutatingPolicies no global context offline.

var selected = map[string]string{"cluster.x-k8s.io/tenant-service-name": "coder"}

func TestResolveTrustsTheServiceCacheOnlyWhenItShowsTheTriggeringEvent(t *testing.T) {
	oldSvc := service("svc-old", "00000000-0000-0000-0000-000000000001", "10")
	newSvc := service("svc-new", "00000000-0000-0000-0000-000000000002", "20")
	other := service("svc-other", "00000000-0000-0000-0000-000000000003", "21")
	relabelled := service("svc-new", "00000000-0000-0000-0000-000000000002", "30")
	cases := []struct {
		name        string
		api, cache  []*unstructured.Unstructured
		event       map[string]any
		wantService string
	}{
		{
			name: "no event: the cache", api: list(newSvc, other), cache: list(newSvc),
			wantService: "svc-new",
		},
		{
			// A GitOps sync: the Service was created milliseconds before the VirtualIngress, its event found no
			// VirtualIngress to touch, and the cache has not seen it yet.
			name: "no event, no match in the cache: the API server", api: list(newSvc), cache: list(),
			wantService: "svc-new",
		},
		{
			name: "the cache has seen the create", api: list(newSvc, other), cache: list(newSvc),
			event:       event("CREATE", newSvc),
			wantService: "svc-new",
		},
		{
			name: "the cache has not seen the create: the API server", api: list(newSvc), cache: list(oldSvc),
			event:       event("CREATE", newSvc),
			wantService: "svc-new",
		},
		{
			name: "the cache has not seen the delete: the API server", api: list(newSvc), cache: list(oldSvc, newSvc),
			event:       event("DELETE", oldSvc),
			wantService: "svc-new",
		},
		{
			name: "the cache shows the deleted Service terminating", api: list(newSvc, other), cache: list(terminating(oldSvc), newSvc),
			event:       event("DELETE", oldSvc),
			wantService: "svc-new",
		},
		{
			name: "the cache holds an older resourceVersion: the API server", api: list(relabelled), cache: list(oldSvc, newSvc),
			event:       event("UPDATE", relabelled),
			wantService: "svc-new",
		},
	}
	policies := loadPolicies(t, "policies/virtual-ingress/clusterpolicy/virtual-ingress-resolve.yaml").Policies
	crd := loadCRD(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cluster, err := kyvernosim.NewCluster([]*apiextensionsv1.CustomResourceDefinition{crd}, append(tc.api, namespace("tenant-root")))
			if err != nil {
				t.Fatal(err)
			}
			vi := virtualingress.New("tenant-root", "coder", virtualingress.CoderSpec(selected))
			if tc.event != nil {
				vi.Object["status"] = map[string]any{"serviceEvent": tc.event}
			}
			responses, _, err := kyvernosim.Apply(policies, cluster.WithServicesCache(tc.cache), vi, kyvernov1.Update)
			if err != nil {
				t.Fatal(err)
			}
			backend := firstBackend(t, responses)
			if backend["service"] != tc.wantService || backend["state"] != "Resolved" {
				t.Fatalf("backend resolved to %v (%v): %v; want %s (Resolved)", backend["service"], backend["state"], backend["message"], tc.wantService)
			}
		})
	}
}

func service(name, uid, resourceVersion string) *unstructured.Unstructured {
	s := &unstructured.Unstructured{}
	s.SetGroupVersionKind(kyvernosim.ServiceGVK)
	s.SetNamespace("tenant-root")
	s.SetName(name)
	s.SetUID(types.UID(uid))
	s.SetResourceVersion(resourceVersion)
	s.SetLabels(selected)
	s.Object["metadata"].(map[string]any)["creationTimestamp"] = "2026-11-01T10:00:00Z"
	return s
}

func terminating(s *unstructured.Unstructured) *unstructured.Unstructured {
	t := s.DeepCopy()
	t.Object["metadata"].(map[string]any)["deletionTimestamp"] = "2026-11-01T11:00:00Z"
	return t
}

func list(objs ...*unstructured.Unstructured) []*unstructured.Unstructured { return objs }

func event(operation string, s *unstructured.Unstructured) map[string]any {
	return map[string]any{"operation": operation, "name": s.GetName(), "uid": string(s.GetUID()), "resourceVersion": s.GetResourceVersion()}
}

// firstBackend is status.backends[0] of the VirtualIngress the resolve policy patched.
func firstBackend(t *testing.T, responses []engineapi.EngineResponse) map[string]any {
	t.Helper()
	for _, r := range responses {
		for _, rule := range r.PolicyResponse.Rules {
			if s := rule.Status(); s == engineapi.RuleStatusError || s == engineapi.RuleStatusFail {
				t.Fatalf("rule %s: %s: %s", rule.Name(), s, rule.Message())
			}
		}
		backends, _, _ := unstructured.NestedSlice(r.PatchedResource.Object, "status", "backends")
		if len(backends) > 0 {
			return backends[0].(map[string]any)
		}
	}
	t.Fatal("no status.backends in the responses")
	return nil
}
