package main

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// restartFloor is the floor of the restart rows: once the floor's n Ingresses exist, Kyverno's background controller
// is restarted and k triggers are pointed at new Services at once, right after. Kyverno's bare synchronized generate
// rule then re-syncs every Ingress it made (which it does at each start) and follows the k changes: how soon it can,
// the bound of the clusterPolicy engine, whose generate rule is synchronized too.
func (b *bench) restartFloor(ctx context.Context, ns string, n int) (*restartResult, error) {
	k := min(b.restartRecreates, n/2)
	if err := b.waitUpdateRequestsDrained(ctx); err != nil {
		return nil, err
	}
	fmt.Printf("[floor] background controller restart, then %d triggers pointed at new Services at once\n", k)
	res, err := b.afterEvent(ctx, ns, 0, k, b.restartBackground(ctx), b.repointTrigger(ctx, ns))
	if err != nil {
		return nil, fmt.Errorf("floor restart: %w", err)
	}
	fmt.Printf("[floor] after the restart, %d of %d followed within %s (p50 %.0f ms, p95 %.0f ms, max %.0f ms)\n",
		res.Within5s, k, restartFollowTarget, res.FollowP50Ms, res.FollowP95Ms, res.FollowMs)
	return res, nil
}

// repointTrigger is the floor's counterpart of recreateService: Service svc-<i> recreated as svc-<i>-new, and trigger
// vi-<i> told so (the floor has no Service events: its trigger's update stands for the VirtualIngress's touch).
func (b *bench) repointTrigger(ctx context.Context, ns string) func(i int) error {
	recreate := b.recreateService(ctx, ns)
	return func(i int) error {
		if err := recreate(i); err != nil {
			return err
		}
		patch := fmt.Appendf(nil, `{"spec":{"service":"svc-%d-new"}}`, i)
		_, err := b.dyn.Resource(floorGVR).Namespace(ns).Patch(ctx, fmt.Sprintf("vi-%d", i), types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
}
