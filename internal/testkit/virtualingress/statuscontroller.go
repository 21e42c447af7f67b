package virtualingress

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/controller"
)

// StartStatusController runs the chart's status controller in this process with cfg's identity (give it the chart's
// ServiceAccount, so that it works with the chart's RBAC and under its admission policies), reading UpdateRequests
// in kyvernoNamespace. The returned function stops it and reports how it ended.
func StartStatusController(cfg *rest.Config, kyvernoNamespace string, opts controller.Options) (stop func() error, err error) {
	// Several managers in one process (an e2e upgrade restarts it) would otherwise clash on controller names.
	opts.SkipNameValidation = true
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:                  controller.CacheOptions(kyvernoNamespace),
		Client:                 controller.ClientOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, fmt.Errorf("status controller: %w", err)
	}
	if err := controller.Setup(mgr, opts); err != nil {
		return nil, fmt.Errorf("status controller: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() error {
		cancel()
		return <-done
	}, nil
}
