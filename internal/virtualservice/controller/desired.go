package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/routes"
)

// Names the operator writes and recognises.
const (
	// FieldManager owns the operator's fields in server-side apply, and names its Events.
	FieldManager = "virtualservice-operator"
	// LabelManagedBy / ManagedByValue mark VirtualServices the operator created; it deletes no others.
	LabelManagedBy = "managed-by"
	ManagedByValue = "virtualservice-operator"
	// LabelService names the production Service a VirtualService belongs to (its name may come from the template).
	LabelService = "virtualservice-operator.io/service"
	// AnnotationDeveloperRoutes lists the developer namespaces that have a route; AnnotationSkipped the developer
	// Services left out and why. Together they are the per-Service status.
	AnnotationDeveloperRoutes = "virtualservice-operator.io/developer-routes"
	AnnotationSkipped         = "virtualservice-operator.io/skipped-routes"
	// AnnotationApplied is a hash of what the operator last applied, so that a field dropped from the template is
	// noticed (a subset comparison with the live object cannot see removals).
	AnnotationApplied = "virtualservice-operator.io/applied"
)

// desiredObject is the apply configuration for svc's VirtualService: the operator's fields only, plus the routes of
// other writers found in liveHTTP (spec.http is one atomic list to server-side apply, so keeping them means
// re-sending them).
func desiredObject(gvk schema.GroupVersionKind, svc *corev1.Service, res *routes.Result, liveHTTP []any) *unstructured.Unstructured {
	t := res.Template
	labels := map[string]any{}
	for k, v := range t.Labels {
		labels[k] = v
	}
	labels[LabelManagedBy] = ManagedByValue
	labels[LabelService] = svc.Name
	active, skipped := res.Status()
	annotations := map[string]any{AnnotationDeveloperRoutes: active, AnnotationSkipped: skipped}
	for k, v := range t.Annotations {
		annotations[k] = v
	}
	spec := maps.Clone(t.ExtraSpec)
	spec["hosts"] = t.Hosts
	spec["http"] = res.HTTP(nil)
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{
			"name":        t.Name,
			"namespace":   svc.Namespace,
			"labels":      labels,
			"annotations": annotations,
			"ownerReferences": []any{map[string]any{
				"apiVersion": "v1",
				"kind":       "Service",
				"name":       svc.Name,
				"uid":        string(svc.UID),
				"controller": true,
			}},
		},
		"spec": spec,
	}}
	u.SetGroupVersionKind(gvk)
	annotations[AnnotationApplied] = hashOf(u.Object)
	spec["http"] = res.HTTP(liveHTTP)
	return u
}

func hashOf(obj map[string]any) string {
	b, err := json.Marshal(obj) // map keys are sorted, so equal content gives equal bytes
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// upToDate reports whether live already has everything desired says, so that no write is needed.
func upToDate(live, desired *unstructured.Unstructured) bool {
	if live.GetAnnotations()[AnnotationApplied] != desired.GetAnnotations()[AnnotationApplied] {
		return false
	}
	for k, v := range desired.GetLabels() {
		if live.GetLabels()[k] != v {
			return false
		}
	}
	for k, v := range desired.GetAnnotations() {
		if live.GetAnnotations()[k] != v {
			return false
		}
	}
	if !hasOwner(live.GetOwnerReferences(), desired.GetOwnerReferences()[0].UID) {
		return false
	}
	liveSpec, _ := live.Object["spec"].(map[string]any)
	for k, v := range desired.Object["spec"].(map[string]any) {
		if !reflect.DeepEqual(liveSpec[k], v) {
			return false
		}
	}
	return true
}

func hasOwner(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// managed reports whether the operator created obj for the Service named service.
func managed(obj *unstructured.Unstructured, service string) bool {
	l := obj.GetLabels()
	if l[LabelManagedBy] != ManagedByValue || l[LabelService] != service {
		return false
	}
	refs := obj.GetOwnerReferences()
	if len(refs) == 0 {
		return true
	}
	for _, r := range refs {
		if r.Kind == "Service" && r.Name == service {
			return true
		}
	}
	return false
}

func liveHTTP(live *unstructured.Unstructured) []any {
	if live == nil {
		return nil
	}
	http, _, _ := unstructured.NestedSlice(live.Object, "spec", "http")
	return http
}
