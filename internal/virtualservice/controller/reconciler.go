package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/config"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/routes"
)

// requeueWhileSyncing is how soon a Service is looked at again while a namespace cache it needs is still filling.
// Writing before all caches are synced could create a VirtualService without developer routes that exist.
const requeueWhileSyncing = 500 * time.Millisecond

// serviceReconciler makes the VirtualService of one production Service (request = production namespace/name)
// what routes computes, with a single write of the final state.
type serviceReconciler struct {
	store    *Store
	ns       *namespaces
	writer   client.Client
	live     client.Reader
	recorder events.EventRecorder
	gvk      schema.GroupVersionKind
	backoff  wait.Backoff
	written  *ownWrites
}

func (r *serviceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cfg := r.store.Current()
	if cfg == nil || req.Namespace != cfg.DefaultNamespace {
		return ctrl.Result{}, nil // queued under an older configuration
	}
	prod, _, err := r.ns.reader(cfg.DefaultNamespace)
	if err != nil {
		return r.waiting(err)
	}
	var svc corev1.Service
	err = prod.Get(ctx, req.NamespacedName, &svc)
	switch {
	case apierrors.IsNotFound(err), err == nil && svc.DeletionTimestamp != nil:
		return r.serviceGone(ctx, prod, req.Namespace, req.Name)
	case err != nil:
		return ctrl.Result{}, err
	}
	devs, err := r.developers(ctx, cfg, req.Name)
	if err != nil {
		return r.waiting(err)
	}
	res, err := routes.Compute(routes.Input{Config: cfg, Service: &svc, Developers: devs})
	if err != nil {
		reconcileResults.WithLabelValues(resultError).Inc()
		return ctrl.Result{}, err
	}
	result, err := r.apply(ctx, prod, &svc, res)
	reconcileResults.WithLabelValues(result).Inc()
	if err != nil {
		r.recorder.Eventf(&svc, nil, corev1.EventTypeWarning, "WriteFailed", "Apply", "VirtualService %s: %v", res.Template.Name, err)
		return ctrl.Result{}, err
	}
	if result == resultForeign {
		return ctrl.Result{}, nil
	}
	developerRoutes.WithLabelValues(svc.Name).Set(float64(len(res.Active)))
	skippedRoutes.WithLabelValues(svc.Name).Set(float64(len(res.Skipped)))
	// A template edit may rename the VirtualService; the one under the old name is the operator's to remove.
	return ctrl.Result{}, r.removeStale(ctx, prod, svc.Namespace, svc.Name, res.Template.Name)
}

func (r *serviceReconciler) waiting(err error) (ctrl.Result, error) {
	var nr errNotReady
	if errors.As(err, &nr) {
		reconcileResults.WithLabelValues(resultWaiting).Inc()
		return ctrl.Result{RequeueAfter: requeueWhileSyncing}, nil
	}
	reconcileResults.WithLabelValues(resultError).Inc()
	return ctrl.Result{}, err
}

func (r *serviceReconciler) serviceGone(ctx context.Context, prod client.Reader, ns, name string) (ctrl.Result, error) {
	r.written.forget(client.ObjectKey{Namespace: ns, Name: name})
	developerRoutes.DeleteLabelValues(name)
	skippedRoutes.DeleteLabelValues(name)
	// The owner reference lets the garbage collector do this too; deleting here does not depend on it running.
	if err := r.removeStale(ctx, prod, ns, name, ""); err != nil {
		reconcileResults.WithLabelValues(resultError).Inc()
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// developers reads what each developer namespace has for the Service name. A namespace still syncing stops the
// reconcile (errNotReady); one that cannot be read is reported in the status and gets no route.
func (r *serviceReconciler) developers(ctx context.Context, cfg *config.Config, name string) ([]routes.Developer, error) {
	devs := make([]routes.Developer, 0, len(cfg.DeveloperNamespaces))
	for _, ns := range cfg.DeveloperNamespaces {
		reader, unreadable, err := r.ns.reader(ns)
		if unreadable {
			devs = append(devs, routes.Developer{Namespace: ns, Unreadable: err.Error()})
			continue
		}
		if err != nil {
			return nil, err
		}
		var svc corev1.Service
		if err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &svc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		var slices discoveryv1.EndpointSliceList
		if err := reader.List(ctx, &slices, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: name}); err != nil {
			return nil, err
		}
		devs = append(devs, routes.Developer{Namespace: ns, Service: &svc, Slices: slices.Items})
	}
	return devs, nil
}

// apply writes the desired VirtualService if the live one differs, with one request when the cache has the object:
// the write carries the cached resourceVersion (or that of the operator's own last write, while the cache has not
// caught up with it: see ownWrites), so if the object changed since (a concurrent writer) the API server answers
// 409 Conflict instead of anything being overwritten. A conflict is retried after 1 s, 2 s, 4 s, 8 s and 16 s, each
// time on a fresh read from the API server. A create is preceded by a read from the API server, since without a
// resourceVersion nothing would stop it from overwriting an object the cache has not seen yet.
func (r *serviceReconciler) apply(ctx context.Context, cached client.Reader, svc *corev1.Service, res *routes.Result) (string, error) {
	name := res.Template.Name
	key := client.ObjectKeyFromObject(svc)
	reader := cached
	backoff := r.backoff
	for {
		live, err := r.get(ctx, reader, svc.Namespace, name)
		if err == nil && reader == cached {
			if live = r.written.latest(key, live); live == nil {
				live, err = r.get(ctx, r.live, svc.Namespace, name)
			}
		}
		if err != nil {
			return resultError, err
		}
		if live != nil && !managed(live, svc.Name) {
			r.recorder.Eventf(svc, nil, corev1.EventTypeWarning, "VirtualServiceNotManaged", "Apply",
				"VirtualService %s exists and is not managed by %s for this Service; leaving it alone", name, FieldManager)
			return resultForeign, nil
		}
		desired := desiredObject(r.gvk, svc, res, liveHTTP(live))
		if live != nil && upToDate(live, desired) {
			return resultUnchanged, nil
		}
		base := ""
		if live != nil {
			base = live.GetResourceVersion()
			desired.SetResourceVersion(base)
		}
		writes.WithLabelValues("apply").Inc()
		err = r.writer.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired), client.FieldOwner(FieldManager), client.ForceOwnership)
		if err == nil {
			r.written.record(key, base, desired)
			r.report(svc, live, desired)
			if live == nil {
				return resultCreated, nil
			}
			return resultUpdated, nil
		}
		if !apierrors.IsConflict(err) || backoff.Steps <= 1 {
			return resultError, fmt.Errorf("applying VirtualService %s/%s: %w", svc.Namespace, name, err)
		}
		writeConflicts.Inc()
		log.FromContext(ctx).V(1).Info("conflict writing the VirtualService; retrying on a fresh read", "after", backoff.Duration)
		select {
		case <-ctx.Done():
			return resultError, ctx.Err()
		case <-time.After(backoff.Step()):
		}
		reader = r.live
	}
}

func (r *serviceReconciler) get(ctx context.Context, reader client.Reader, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.gvk)
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return u, nil
}

// report emits an Event on the production Service when the set of developer routes (or of skipped ones) changed.
// desired is the object as written (the API server's answer).
func (r *serviceReconciler) report(svc *corev1.Service, live, desired *unstructured.Unstructured) {
	active, skipped := desired.GetAnnotations()[AnnotationDeveloperRoutes], desired.GetAnnotations()[AnnotationSkipped]
	if live != nil && live.GetAnnotations()[AnnotationDeveloperRoutes] == active && live.GetAnnotations()[AnnotationSkipped] == skipped {
		return
	}
	reason := "RoutesUpdated"
	if live == nil {
		reason = "VirtualServiceCreated"
	}
	// The written VirtualService (with its new resourceVersion) as the related object keeps successive Events apart:
	// the events API folds Events with the same regarding/related/reason into one series and keeps the first note.
	r.recorder.Eventf(svc, desired, corev1.EventTypeNormal, reason, "Apply", "VirtualService %s: developer routes [%s]; skipped [%s]",
		desired.GetName(), active, skipped)
}

// removeStale deletes the operator's VirtualServices for service other than keep (all of them when keep is empty).
// Only objects carrying the operator's labels are candidates, and the delete is conditional on the UID read.
func (r *serviceReconciler) removeStale(ctx context.Context, prod client.Reader, ns, service, keep string) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(r.gvk.GroupVersion().WithKind(r.gvk.Kind + "List"))
	if err := prod.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{LabelManagedBy: ManagedByValue, LabelService: service}); err != nil {
		return err
	}
	for i := range list.Items {
		vs := &list.Items[i]
		if vs.GetName() == keep || !managed(vs, service) {
			continue
		}
		writes.WithLabelValues("delete").Inc()
		uid := vs.GetUID()
		if err := r.writer.Delete(ctx, vs, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting VirtualService %s/%s: %w", ns, vs.GetName(), err)
		}
		reconcileResults.WithLabelValues(resultDeleted).Inc()
		log.FromContext(ctx).Info("deleted VirtualService", "virtualService", vs.GetName())
	}
	return nil
}
