package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

func TestOwnStatusWritesDoNotRequeue(t *testing.T) {
	old := example()
	old.Generation = 3
	statusOnly := old.DeepCopy()
	statusOnly.Status.Phase = v1alpha1.PhaseReady
	now := metav1.Now()
	statusOnly.Status.LastSyncTime = &now
	statusOnly.ResourceVersion = "2"
	if specChanged.Update(event.TypedUpdateEvent[*v1alpha1.AppsIngress]{ObjectOld: old, ObjectNew: statusOnly}) {
		t.Error("a status-only update passes")
	}
	for name, mutate := range map[string]func(*v1alpha1.AppsIngress){
		"spec":       func(a *v1alpha1.AppsIngress) { a.Generation = 4 },
		"deletion":   func(a *v1alpha1.AppsIngress) { a.DeletionTimestamp = &now },
		"finalizer":  func(a *v1alpha1.AppsIngress) { a.Finalizers = nil },
		"annotation": func(a *v1alpha1.AppsIngress) { a.Annotations = map[string]string{"x": "y"} },
	} {
		n := old.DeepCopy()
		n.Finalizers = []string{Finalizer}
		o := old.DeepCopy()
		o.Finalizers = []string{Finalizer}
		mutate(n)
		if !specChanged.Update(event.TypedUpdateEvent[*v1alpha1.AppsIngress]{ObjectOld: o, ObjectNew: n}) {
			t.Errorf("a %s change is filtered out", name)
		}
	}
}
