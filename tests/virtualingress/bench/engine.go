package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

// setupTimeout bounds the waits around the measurements (policies ready, clean-up), which --timeout does not.
const setupTimeout = 5 * time.Minute

// parseEngines splits the --engines flag, rejecting unknown and repeated names.
func parseEngines(s string) ([]string, error) {
	var engines []string
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !slices.Contains(policyengine.All, e) {
			return nil, fmt.Errorf("unknown engine %q (want %s)", e, strings.Join(policyengine.All, ", "))
		}
		if slices.Contains(engines, e) {
			return nil, fmt.Errorf("engine %q given twice", e)
		}
		engines = append(engines, e)
	}
	if len(engines) == 0 {
		return nil, fmt.Errorf("no engine in %q", s)
	}
	return engines, nil
}

// cleanUp leaves the cluster as the next engine needs it after `helm uninstall`: no policy of the chart left (of
// either engine), the namespaces this engine's measurements created deleted (their VirtualIngresses, Services and
// the Ingresses the uninstall orphaned with them), no UpdateRequest pending, and fresh Kyverno controllers, so that
// the next engine's peak memory and caches start from zero.
func (b *bench) cleanUp(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, setupTimeout, true, func(ctx context.Context) (bool, error) {
		names, err := b.cluster.Policies(ctx, policyengine.PolicySelector)
		return len(names) == 0, err
	})
	if err != nil {
		return fmt.Errorf("policies still present after helm uninstall: %w", err)
	}
	// The policies are gone, so deleting Services no longer makes Kyverno touch VirtualIngresses. The namespaces'
	// contents are deleted here first, in bulk: the namespace controller alone (kube-controller-manager's client
	// limits) takes minutes over thousands of objects on a busy machine.
	for _, ns := range b.namespaces {
		if err := b.emptyNamespace(ctx, ns); err != nil {
			return fmt.Errorf("emptying namespace %s: %w", ns, err)
		}
		if err := b.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, setupTimeout, true, func(ctx context.Context) (bool, error) {
		for _, ns := range b.namespaces {
			if _, err := b.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("namespaces %s not deleted: %w", strings.Join(b.namespaces, ", "), err)
	}
	b.namespaces = nil
	// A background controller that lost its leader lease mid-run (see supervisor) can leave UpdateRequests pending
	// that its restarted self never picks up. Their policies and triggers are gone by now; left in place they would
	// count against the next engine's updateRequestThreshold, so they are deleted, and said.
	if err := b.waitUpdateRequestsDrained(ctx); err != nil {
		n, derr := b.deletePendingUpdateRequests(ctx)
		if derr != nil {
			return fmt.Errorf("%w; deleting them: %w", err, derr)
		}
		fmt.Printf("[cleanup] %v: deleted those %d, whose policies and triggers were already gone\n", err, n)
	}
	return b.kyverno.restart(ctx)
}

// emptyNamespace deletes what the measurements create in ns: VirtualIngresses, VirtualHTTPRoutes and HTTPRoutes (where
// Gateway API is installed; NotFound otherwise), the floor's triggers and Ingresses by collection, Services one by one (the API serves no collection delete for them) in parallel.
func (b *bench) emptyNamespace(ctx context.Context, ns string) error {
	for _, gvr := range []schema.GroupVersionResource{virtualingress.GVR, virtualingress.RouteGVR, virtualingress.HTTPRouteGVR, floorGVR} {
		err := b.dyn.Resource(gvr).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if err := b.kube.NetworkingV1().Ingresses(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return err
	}
	services, err := b.kube.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	return parallel(len(services.Items), func(i int) error {
		err := b.kube.CoreV1().Services(ns).Delete(ctx, services.Items[i].Name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}
