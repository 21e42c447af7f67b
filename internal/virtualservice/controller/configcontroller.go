package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/config"
)

// configReconciler loads the ConfigMap into the Store on every change of it. It runs in every replica, not only the
// leader, so that each replica's readiness says whether the configuration is valid.
type configReconciler struct {
	reader   client.Reader
	key      types.NamespacedName
	store    *Store
	recorder events.EventRecorder
}

func setupConfigController(mgr ctrl.Manager, key types.NamespacedName, store *Store) error {
	r := &configReconciler{reader: mgr.GetClient(), key: key, store: store, recorder: mgr.GetEventRecorder(FieldManager)}
	return ctrl.NewControllerManagedBy(mgr).
		Named("virtualservice-operator-config").
		For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == key.Namespace && o.GetName() == key.Name
		}))).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: 1}).
		Complete(r)
}

func (r *configReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	var cm corev1.ConfigMap
	if err := r.reader.Get(ctx, r.key, &cm); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		r.reject(ctx, "missing", fmt.Errorf("ConfigMap %s not found", r.key), nil)
		return ctrl.Result{}, nil
	}
	cfg, err := config.Parse([]byte(cm.Data[config.Key]))
	if err != nil {
		r.reject(ctx, "invalid", fmt.Errorf("ConfigMap %s: %w", r.key, err), &cm)
		return ctrl.Result{}, nil
	}
	configValid.Set(1)
	if !r.store.Set(cfg) {
		configReloads.WithLabelValues("unchanged").Inc()
		return ctrl.Result{}, nil
	}
	configReloads.WithLabelValues("applied").Inc()
	logger.Info("configuration applied", "defaultNamespace", cfg.DefaultNamespace,
		"developerNamespaces", cfg.DeveloperNamespaces, "headerName", cfg.HeaderName)
	r.recorder.Eventf(&cm, nil, corev1.EventTypeNormal, "ConfigApplied", "Reload",
		"configuration applied: defaultNamespace %s, %d developer namespace(s), header %s",
		cfg.DefaultNamespace, len(cfg.DeveloperNamespaces), cfg.HeaderName)
	return ctrl.Result{}, nil
}

// reject keeps the configuration in force and says so in the log, an Event, the metrics and readiness.
func (r *configReconciler) reject(ctx context.Context, result string, err error, cm *corev1.ConfigMap) {
	r.store.Reject(err)
	configValid.Set(0)
	configReloads.WithLabelValues(result).Inc()
	kept := "no configuration is in force yet"
	if r.store.Current() != nil {
		kept = "the last valid configuration stays in force"
	}
	log.FromContext(ctx).Error(err, "configuration rejected; "+kept)
	if cm != nil {
		r.recorder.Eventf(cm, nil, corev1.EventTypeWarning, "InvalidConfig", "Reload", "%v; %s", err, kept)
	}
}
