package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func vsAt(name, resourceVersion string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace("prod")
	u.SetName(name)
	u.SetResourceVersion(resourceVersion)
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: FieldManager}})
	return u
}

func TestOwnWriteStandsInForTheVersionItReplaced(t *testing.T) {
	web := client.ObjectKey{Namespace: "prod", Name: "web"}
	w := newOwnWrites()
	w.record(web, "10", vsAt("web-virtual-service", "11"))

	// The cache has not seen the write yet: the write is what the VirtualService is now.
	got := w.latest(web, vsAt("web-virtual-service", "10"))
	if got.GetResourceVersion() != "11" {
		t.Fatalf("cache at 10, own write 11 replaced it: got version %s, want 11", got.GetResourceVersion())
	}
	if got.GetManagedFields() != nil {
		t.Error("the record keeps managed fields, which the cache strips")
	}
	// ... until it has: from then on the cache is the better source, and the record is gone.
	if got := w.latest(web, vsAt("web-virtual-service", "11")); got.GetResourceVersion() != "11" {
		t.Fatalf("cache caught up: got version %s", got.GetResourceVersion())
	}
	if got := w.latest(web, vsAt("web-virtual-service", "10")); got.GetResourceVersion() != "10" {
		t.Errorf("record still used after the cache caught up: version %s", got.GetResourceVersion())
	}
}

func TestOwnWriteGivesWayToOthers(t *testing.T) {
	web := client.ObjectKey{Namespace: "prod", Name: "web"}
	for name, cached := range map[string]*unstructured.Unstructured{
		"another writer came after": vsAt("web-virtual-service", "12"),
		"deleted since":             nil,
		"renamed by the template":   vsAt("web-routes", "10"),
	} {
		t.Run(name, func(t *testing.T) {
			w := newOwnWrites()
			w.record(web, "10", vsAt("web-virtual-service", "11"))
			if got := w.latest(web, cached); got != cached {
				t.Errorf("got %v, want the cached object", got)
			}
		})
	}
}

func TestCreatesAndNoOpsAreNotRecorded(t *testing.T) {
	web := client.ObjectKey{Namespace: "prod", Name: "web"}
	w := newOwnWrites()
	// A create: the cache lacking the object says nothing about whether it was deleted since; the API server is read.
	w.record(web, "", vsAt("web-virtual-service", "11"))
	if got := w.latest(web, nil); got != nil {
		t.Errorf("create recorded: got %v", got)
	}
	w.record(web, "10", vsAt("web-virtual-service", "10"))
	if len(w.m) != 0 {
		t.Errorf("a write that changed nothing is recorded: %v", w.m)
	}
}
