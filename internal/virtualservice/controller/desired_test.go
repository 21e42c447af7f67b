package controller

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/config"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/routes"
)

var gvk = schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"}

func result(t *testing.T, configYAML string) (*corev1.Service, *routes.Result) {
	t.Helper()
	cfg, err := config.Parse([]byte(configYAML))
	if err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web", UID: "u1"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	res, err := routes.Compute(routes.Input{Config: cfg, Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	return svc, res
}

// live is desired as the API server would return it: a round trip through JSON, plus fields of other writers.
func live(t *testing.T, desired *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	b, err := desired.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	labels := u.GetLabels()
	labels["team"] = "web"
	u.SetLabels(labels)
	u.SetResourceVersion("42")
	return u
}

func TestUpToDate(t *testing.T) {
	svc, res := result(t, "defaultNamespace: prod")
	desired := desiredObject(gvk, svc, res, nil)
	if !upToDate(live(t, desired), desired) {
		t.Fatal("the object as written (plus foreign labels) is not up to date")
	}

	l := live(t, desired)
	_ = unstructured.SetNestedSlice(l.Object, []any{}, "spec", "http")
	if upToDate(l, desired) {
		t.Error("routes removed by someone else went unnoticed")
	}

	// A template that drops a field: the live object still has it; only the hash tells.
	_, withGateways := result(t, "defaultNamespace: prod\nvirtualServiceTemplate: |\n  metadata: {name: '${serviceName}-virtual-service'}\n  spec:\n    hosts: [web]\n    gateways: [mesh]\n    http: [{route: [{destination: {host: web}}]}]\n")
	_, without := result(t, "defaultNamespace: prod\nvirtualServiceTemplate: |\n  metadata: {name: '${serviceName}-virtual-service'}\n  spec:\n    hosts: [web]\n    http: [{route: [{destination: {host: web}}]}]\n")
	before := live(t, desiredObject(gvk, svc, withGateways, nil))
	if upToDate(before, desiredObject(gvk, svc, without, nil)) {
		t.Error("a field dropped from the template went unnoticed")
	}

	l = live(t, desired)
	l.SetOwnerReferences(nil)
	if upToDate(l, desired) {
		t.Error("a missing owner reference went unnoticed")
	}
}

func TestDesiredKeepsForeignRoutesAndHashesOnlyOwnFields(t *testing.T) {
	svc, res := result(t, "defaultNamespace: prod")
	foreign := map[string]any{"name": "canary"}
	a := desiredObject(gvk, svc, res, nil)
	b := desiredObject(gvk, svc, res, []any{foreign, map[string]any{"name": "vso-dev-gone"}})
	if a.GetAnnotations()[AnnotationApplied] != b.GetAnnotations()[AnnotationApplied] {
		t.Error("foreign routes changed the hash of the operator's own fields")
	}
	http, _, _ := unstructured.NestedSlice(b.Object, "spec", "http")
	if len(http) != 2 || http[0].(map[string]any)["name"] != "canary" || http[1].(map[string]any)["name"] != "vso-default" {
		t.Errorf("http %v, want canary then vso-default", http)
	}
	if b.GetLabels()[LabelManagedBy] != ManagedByValue || b.GetLabels()[LabelService] != "web" || b.GetOwnerReferences()[0].UID != "u1" {
		t.Errorf("metadata %v %v", b.GetLabels(), b.GetOwnerReferences())
	}
}

func TestManaged(t *testing.T) {
	svc, res := result(t, "defaultNamespace: prod")
	ours := live(t, desiredObject(gvk, svc, res, nil))
	if !managed(ours, "web") {
		t.Error("the operator's own object is not managed")
	}
	if managed(ours, "api") {
		t.Error("managed for another Service")
	}
	noLabel := ours.DeepCopy()
	noLabel.SetLabels(map[string]string{LabelService: "web"})
	if managed(noLabel, "web") {
		t.Error("an object without managed-by is managed")
	}
	otherOwner := ours.DeepCopy()
	otherOwner.SetOwnerReferences([]metav1.OwnerReference{{Kind: "Deployment", Name: "web"}})
	if managed(otherOwner, "web") {
		t.Error("an object owned by something else is managed")
	}
}

func TestStoreKeepsLastGood(t *testing.T) {
	s := NewStore()
	if s.Current() != nil || s.Problem() == nil {
		t.Fatal("a new store has a configuration")
	}
	changes := s.Watch()
	good, _ := config.Parse([]byte("defaultNamespace: prod"))
	if !s.Set(good) {
		t.Fatal("first configuration not a change")
	}
	<-changes
	s.Reject(errors.New("bad"))
	if s.Current() != good || s.Problem() == nil {
		t.Error("a rejected ConfigMap replaced the configuration or was not reported")
	}
	same, _ := config.Parse([]byte("defaultNamespace: prod\nheaderName: x-developer"))
	if s.Set(same) || s.Problem() != nil {
		t.Error("an equal configuration is a change, or the problem stayed")
	}
	select {
	case <-changes:
		t.Error("watchers told of an unchanged configuration")
	default:
	}
}
