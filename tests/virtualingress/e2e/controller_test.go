//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/controller"
)

// The chart's release (helmrelease.ForRepoChart) and the status controller's ServiceAccount in it.
const (
	releaseNamespace         = "virtual-ingress"
	controllerServiceAccount = "virtual-ingress-controller"
)

// statusControllerTimings are shorter than the chart's defaults so that the scenarios that wait for a repair stay
// short; the logic is the same.
var statusControllerTimings = controller.Options{Grace: 2 * time.Second, RepairAfter: 5 * time.Second, MaxRepairBackoff: 20 * time.Second}

// startStatusController runs the status controller in this process, as the chart's Deployment would: authenticated
// as the chart's ServiceAccount (so with the chart's RBAC and under its admission policies), with the flags the chart
// derives from values. It replaces the one started before (an upgrade changes its flags; an uninstall deletes its
// ServiceAccount).
func startStatusController(t *testing.T, values map[string]any) {
	t.Helper()
	stopStatusController()
	setControllerLogger(t)
	cfg, err := env.cluster.ServiceAccountConfig(context.Background(), releaseNamespace, controllerServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := virtualingress.ChartControllerOptions(values)
	if err != nil {
		t.Fatal(err)
	}
	opts.Grace, opts.RepairAfter, opts.MaxRepairBackoff = statusControllerTimings.Grace, statusControllerTimings.RepairAfter,
		statusControllerTimings.MaxRepairBackoff
	// As the chart's --routes: the route policies are rendered for these engines (Gateway API's CRDs are installed).
	opts.Routes = routesEngines[stringValue(values, env.engine, "policy", "engine")]
	stop, err := virtualingress.StartStatusController(cfg, "kyverno", opts)
	if err != nil {
		t.Fatal(err)
	}
	env.stopController = func() {
		if err := stop(); err != nil {
			t.Logf("status controller: %v", err)
		}
	}
}

func stopStatusController() {
	if env.stopController != nil {
		env.stopController()
		env.stopController = nil
	}
}

// stringValue reads a nested chart value, or def when it is not given.
func stringValue(values map[string]any, def string, path ...string) string {
	var cur any = values
	for _, key := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return def
		}
		cur = m[key]
	}
	if s, ok := cur.(string); ok {
		return s
	}
	return def
}

var loggerOnce sync.Once

// setControllerLogger sends the controller's log to a file under .devcluster (git-ignored), which outlives the cluster.
func setControllerLogger(t *testing.T) {
	loggerOnce.Do(func() {
		f, err := os.Create(filepath.Join(env.repoRoot, ".devcluster", "e2e-status-controller.log"))
		if err != nil {
			t.Fatal(err)
		}
		ctrl.SetLogger(zap.New(zap.WriteTo(f), zap.UseDevMode(true)))
	})
}
