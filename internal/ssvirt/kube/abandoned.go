package kube

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AbandonedMessage ends the task of an instantiation whose process stopped before it created the TemplateInstance.
const AbandonedMessage = "the ssvirt-api process that took the request stopped before it created the TemplateInstance; instantiate again"

// endAbandonedInstantiations settles the vApps still instantiating long after their rows were written from what
// Kubernetes holds. The request that wrote such a row had InstantiateTimeout to create the TemplateInstance, so by
// twice that a missing one will never come: the vApp is removed and its task ends in error. One that exists is
// followed as its events would have been (the process that made it may have stopped before the leader's cache
// saw it). The leader alone runs this, with the other reconcilers.
func (k *Cluster) endAbandonedInstantiations(ctx context.Context) {
	apps, err := k.store.InstantiatingSince(ctx, time.Now().Add(-2*k.opts.InstantiateTimeout))
	if err != nil {
		k.log.Error(err, "listing vApps still instantiating")
		return
	}
	for _, a := range apps {
		ti := &unstructured.Unstructured{}
		ti.SetGroupVersionKind(TemplateInstanceGVK)
		// The API server, not the cache: a TemplateInstance the cache has not seen yet must not be taken for none.
		err := k.reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: InstanceName(a.ID)}, ti)
		switch {
		case err == nil:
			err = k.followInstance(ctx, a.ID, ti)
		case apierrors.IsNotFound(err):
			var ended bool
			if ended, err = k.store.AbandonVApp(ctx, a.ID, AbandonedMessage); ended {
				k.log.Info("removed a vApp whose TemplateInstance was never created", "vapp", a.ID, "namespace", a.Namespace)
			}
		}
		if err != nil {
			k.log.Error(k.seen(err), "settling a vApp still instantiating", "vapp", a.ID)
		}
	}
}
