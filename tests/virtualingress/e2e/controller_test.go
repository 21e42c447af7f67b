//go:build e2e

package e2e

import (
	"context"
	"fmt"
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
// as the chart's ServiceAccount (so with the chart's RBAC and under its admission policies), with the flags of the
// Deployment the chart installed. It replaces the one started before (an upgrade changes its flags; an uninstall
// deletes its ServiceAccount).
func startStatusController(t *testing.T) {
	t.Helper()
	stopStatusController()
	setControllerLogger(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The Deployment Helm installed, not an offline render: its flags (--routes above all) follow what Helm found in
	// the cluster, and so match the RBAC it rendered with them.
	stop, err := virtualingress.StartInstalledStatusController(ctx, env.cluster, env.dyn, releaseNamespace, "kyverno",
		func(o *controller.Options) {
			o.Grace, o.RepairAfter, o.MaxRepairBackoff = statusControllerTimings.Grace, statusControllerTimings.RepairAfter,
				statusControllerTimings.MaxRepairBackoff
		})
	if err != nil {
		t.Fatal(err)
	}
	env.stopController = func() {
		// Not t.Logf: a later test may stop the controller this one started.
		if err := stop(); err != nil {
			fmt.Fprintf(os.Stderr, "status controller: %v\n", err)
		}
	}
}

func stopStatusController() {
	if env.stopController != nil {
		env.stopController()
		env.stopController = nil
	}
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
