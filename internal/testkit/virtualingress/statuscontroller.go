package virtualingress

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/controller"
)

// StartStatusController runs the chart's status controller in this process with cfg's identity (give it the chart's
// ServiceAccount, so that it works with the chart's RBAC and under its admission policies), reading UpdateRequests
// in kyvernoNamespace, and returns once its caches have synced. The returned function stops it and reports how it
// ended.
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
	// It returns once the manager's caches have synced, so that a scenario starts with the controller at work, and
	// because controller-runtime's manager never returns if it is stopped before then: its start loop keeps selecting
	// on the cancelled context, a core at 100% (v0.24 and v0.25). A runnable of the group the manager starts after its
	// caches tells when.
	started := make(startSignal)
	if err := mgr.Add(started); err != nil {
		return nil, fmt.Errorf("status controller: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	select {
	case <-started:
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("status controller ended as it started: %w", err)
	case <-time.After(cacheSyncWait):
		// Left running: its context is released only if it ever ends by itself.
		go func() {
			defer cancel()
			if err := <-done; err != nil {
				fmt.Fprintf(os.Stderr, "status controller left running: %v\n", err)
			}
		}()
		return nil, fmt.Errorf("status controller: its caches did not sync within %s (its log says what it may not "+
			"list); it is left running, since stopping it now would never end", cacheSyncWait)
	}
	return func() error {
		cancel()
		return <-done
	}, nil
}

// cacheSyncWait bounds how long starting waits for the manager's caches to sync.
const cacheSyncWait = time.Minute

// startSignal is closed when the manager starts the runnables that do not need leader election, which it does once
// its caches have synced.
type startSignal chan struct{}

func (s startSignal) Start(ctx context.Context) error {
	close(s)
	<-ctx.Done()
	return nil
}

func (s startSignal) NeedLeaderElection() bool { return false }

// StartInstalledStatusController runs the status controller as the release in namespace installed it: as its
// Deployment's ServiceAccount and with its flags (InstalledController), adjusted by adjust when given (shorter timings
// in a test).
func StartInstalledStatusController(ctx context.Context, cluster *devcluster.Cluster, dyn dynamic.Interface, namespace,
	kyvernoNamespace string, adjust func(*controller.Options),
) (stop func() error, err error) {
	cc, err := InstalledController(ctx, dyn, namespace)
	if err != nil {
		return nil, err
	}
	cfg, err := cluster.ServiceAccountConfig(ctx, cc.Namespace, cc.ServiceAccount)
	if err != nil {
		return nil, err
	}
	opts := cc.Options
	if adjust != nil {
		adjust(&opts)
	}
	return StartStatusController(cfg, kyvernoNamespace, opts)
}
