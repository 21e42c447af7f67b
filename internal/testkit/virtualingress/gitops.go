package virtualingress

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// GitOpsManager is the field manager of the tests' server-side applies, standing for Argo CD or Flux.
const GitOpsManager = "gitops"

// ServiceGVR is the resource of core Services, for the dynamic client.
var ServiceGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// TenantService is a Service as the Kubevirt CCM mirrors one: labels to be selected by, one http port 80. An empty
// name is left out, for the caller to set generateName.
func TenantService(namespace, name string, labels map[string]string) *unstructured.Unstructured {
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"spec": map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(80)}}},
	}}
	svc.SetNamespace(namespace)
	svc.SetName(name)
	svc.SetLabels(labels)
	return svc
}

// Apply writes obj server-side as a GitOps sync does (forcing its fields), obj's resource being gvr.
func Apply(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	_, err := dyn.Resource(gvr).Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj,
		metav1.ApplyOptions{FieldManager: GitOpsManager, Force: true})
	return err
}
