package controller

import (
	"maps"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

// specChanged lets through every event but updates that change only the status (or other metadata than labels,
// annotations, finalizers and deletion): the controller's own status writes would otherwise start a new reconcile
// each time, forever.
var specChanged = predicate.TypedFuncs[*v1alpha1.AppsIngress]{
	UpdateFunc: func(e event.TypedUpdateEvent[*v1alpha1.AppsIngress]) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.Generation != n.Generation ||
			!o.DeletionTimestamp.Equal(n.DeletionTimestamp) ||
			!slices.Equal(o.Finalizers, n.Finalizers) ||
			!maps.Equal(o.Labels, n.Labels) ||
			!maps.Equal(o.Annotations, n.Annotations)
	},
}
