package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
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
	// The policies are gone, so deleting Services no longer makes Kyverno touch VirtualIngresses.
	for _, ns := range b.namespaces {
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
	if err := b.waitUpdateRequestsDrained(ctx); err != nil {
		return err
	}
	for _, c := range []string{devcluster.ComponentKyverno, devcluster.ComponentKyvernoBackground} {
		if err := b.cluster.StopComponent(c); err != nil {
			return fmt.Errorf("stopping %s: %w", c, err)
		}
		if err := b.cluster.StartComponent(ctx, c); err != nil {
			return fmt.Errorf("restarting %s: %w", c, err)
		}
	}
	return nil
}
