package kube

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

// InstanceName is the name of a vApp's TemplateInstance; its parameters Secret is InstanceName + "-params".
func InstanceName(vappID string) string { return "vapp-" + vappID }

// Instantiate creates the vApp's TemplateInstance in its VDC's namespace, embedding the Template, and a Secret
// holding the user's parameter values owned by the TemplateInstance (so that deleting the TemplateInstance
// deletes the Secret, as it deletes what the template controller made from it). Values are data: they are
// written as given, never evaluated. When it fails, whatever part it made is taken back (see takeBack) before it
// returns: the caller removes the vApp's row next, and a TemplateInstance left behind would make VMs nobody
// sees.
func (k *Cluster) Instantiate(ctx context.Context, app store.VApp, t Template, params map[string]string, requester string) error {
	err := k.instantiate(ctx, app, t, params, requester)
	if err != nil {
		if tbErr := k.takeBack(ctx, app); tbErr != nil {
			k.log.Error(tbErr, "taking back the TemplateInstance of a failed instantiation; the leader's sweep removes it",
				"vapp", app.ID, "namespace", app.Namespace)
		}
	}
	return err
}

func (k *Cluster) instantiate(ctx context.Context, app store.VApp, t Template, params map[string]string, requester string) error {
	name := InstanceName(app.ID)
	labels := map[string]string{LabelManagedBy: ManagedBy, LabelVAppID: app.ID, LabelVDCID: app.VDCID, LabelOrgID: app.OrgID}

	embedded := map[string]any{
		"apiVersion": TemplateGVK.GroupVersion().String(),
		"kind":       TemplateGVK.Kind,
		"metadata":   map[string]any{"name": t.Name, "namespace": t.object.GetNamespace()},
	}
	for _, field := range []string{"objects", "parameters", "labels", "message"} {
		if v, ok := t.object.Object[field]; ok {
			embedded[field] = runtimeCopy(v)
		}
	}
	ti := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"template":  embedded,
			"secret":    map[string]any{"name": name + "-params"},
			"requester": map[string]any{"username": requester},
		},
	}}
	ti.SetGroupVersionKind(TemplateInstanceGVK)
	ti.SetName(name)
	ti.SetNamespace(app.Namespace)
	ti.SetLabels(labels)
	if err := k.client.Create(ctx, ti); err != nil {
		return k.seen(fmt.Errorf("creating TemplateInstance %s/%s: %w", app.Namespace, name, err))
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name + "-params", Namespace: app.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: TemplateInstanceGVK.GroupVersion().String(), Kind: TemplateInstanceGVK.Kind,
				Name: name, UID: ti.GetUID(), Controller: ptr.To(true),
			}},
		},
		Type:       corev1.SecretTypeOpaque,
		StringData: params,
	}
	if err := k.client.Create(ctx, secret); err != nil {
		// Without its parameters the instance would be made with defaults: Instantiate takes it back.
		return k.seen(fmt.Errorf("creating Secret %s/%s: %w", app.Namespace, secret.Name, err))
	}
	return nil
}

// takeBack deletes what a failed instantiation may have made. It runs on a context of its own: the request's may
// be the very deadline that failed it. A create that timed out may still have been carried out, so the delete is
// sent whatever the create said, and retried; a TemplateInstance that outlives all that has no row by then and
// is the orphan sweep's.
func (k *Cluster) takeBack(ctx context.Context, app store.VApp) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.opts.InstantiateTimeout)
	defer cancel()
	return retry.OnError(wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 6, Cap: 2 * time.Second},
		func(error) bool { return ctx.Err() == nil },
		func() error { return k.DeleteVApp(ctx, app) })
}

func runtimeCopy(v any) any {
	return (&unstructured.Unstructured{Object: map[string]any{"v": v}}).DeepCopy().Object["v"]
}

// DeleteVApp deletes the vApp's TemplateInstance; Kubernetes' garbage collector deletes what it owns.
func (k *Cluster) DeleteVApp(ctx context.Context, app store.VApp) error {
	ti := &unstructured.Unstructured{}
	ti.SetGroupVersionKind(TemplateInstanceGVK)
	ti.SetName(InstanceName(app.ID))
	ti.SetNamespace(app.Namespace)
	err := k.client.Delete(ctx, ti, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return k.seen(err)
	}
	return nil
}
