//go:build devcluster

package devcluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
)

// TestKyvernoGeneratesFromACRDCreatedAfterItsDiscovery: the background controller caches API discovery. Once the
// cache is filled (any generation does it), a kind whose CRD is created afterwards is unknown to it for 15 minutes
// unless its CRD watcher invalidates the cache: every generation from that kind then fails with "failed to list
// trigger resources: <namespace> is forbidden". This is how a chart's CRD arrives in a cluster whose Kyverno already
// runs generate policies, so the devcluster runs Kyverno as the virtual-ingress README tells users to.
func TestKyvernoGeneratesFromACRDCreatedAfterItsDiscovery(t *testing.T) {
	kube, dyn := needCluster(t)
	ctx := t.Context()
	const label = "devcluster-test-crdwatcher"
	// configMapFrom generates a ConfigMap in the namespace nsExpr names (a Kyverno variable).
	configMapFrom := func(kind, nsExpr string) map[string]any {
		return map[string]any{
			"name": "from-" + strings.ToLower(kind),
			"match": map[string]any{"any": []any{map[string]any{"resources": map[string]any{
				"kinds":    []any{kind},
				"selector": map[string]any{"matchLabels": map[string]any{label: "yes"}},
			}}}},
			"generate": map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "name": "from-" + strings.ToLower(kind),
				"namespace": "{{ " + nsExpr + " }}",
				"data":      map[string]any{"data": map[string]any{"from": "{{ request.object.metadata.name }}"}},
			},
		}
	}
	// generated waits a minute for the ConfigMap, and fails with the tail of the background controller's log.
	generated := func(name string) {
		t.Helper()
		err := poll.Wait(ctx, time.Minute, "ConfigMap "+label+"/"+name, func() (bool, string, error) {
			_, err := kube.CoreV1().ConfigMaps(label).Get(ctx, name, metav1.GetOptions{})
			return err == nil, "", err
		})
		if err != nil {
			t.Fatalf("%v; the background controller's log ends:\n%s", err, cluster.Logs(devcluster.ComponentKyvernoBackground))
		}
	}

	// 1. A generation from a built-in kind: the background controller's discovery cache is now filled.
	createPolicy(t, dyn, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
		"metadata": map[string]any{"name": label + "-namespace"},
		"spec":     map[string]any{"rules": []any{configMapFrom("Namespace", "request.object.metadata.name")}},
	}})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: label, Labels: map[string]string{label: "yes"}}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), label, metav1.DeleteOptions{}) })
	generated("from-namespace")

	// 2. A CRD created now, readable by the background controller through aggregation, and a policy on its kind.
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "latecomers.devcluster-test.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "devcluster-test.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "latecomers", Singular: "latecomer", Kind: "Latecomer", ListKind: "LatecomerList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
	crds := apiextensionsclient.NewForConfigOrDie(cluster.RESTConfig()).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
	eventually(t, time.Minute, "the CRD to be Established", func() (bool, error) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, fmt.Errorf("conditions %v", got.Status.Conditions)
	})
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: label, Labels: map[string]string{
			"rbac.kyverno.io/aggregate-to-background-controller": "true",
			"rbac.kyverno.io/aggregate-to-admission-controller":  "true",
		}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"devcluster-test.io"}, Resources: []string{"latecomers"}, Verbs: []string{"get", "list", "watch"}}},
	}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.RbacV1().ClusterRoles().Delete(context.Background(), label, metav1.DeleteOptions{}) })
	createPolicy(t, dyn, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
		"metadata": map[string]any{"name": label + "-latecomer"},
		"spec":     map[string]any{"rules": []any{configMapFrom("Latecomer", "request.object.metadata.namespace")}},
	}})

	// 3. Its objects generate within the minute, not after the 15-minute discovery refresh.
	latecomers := schema.GroupVersionResource{Group: "devcluster-test.io", Version: "v1", Resource: "latecomers"}
	start := time.Now()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "devcluster-test.io/v1", "kind": "Latecomer",
		"metadata": map[string]any{"name": "one", "namespace": label, "labels": map[string]any{label: "yes"}},
	}}
	if _, err := dyn.Resource(latecomers).Namespace(label).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	generated("from-latecomer")
	t.Logf("generated from the new kind %s after its object was created", time.Since(start).Round(time.Millisecond))
}
