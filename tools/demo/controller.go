package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// startStatusController runs the chart's status controller in this process the way the chart's Deployment runs it:
// with the token of the Deployment's ServiceAccount (so the chart's RBAC and admission policies apply) and the
// arguments the chart renders for its default values. Its log goes to the cluster's log directory.
func startStatusController(ctx context.Context, cluster *devcluster.Cluster) (stop func() error, err error) {
	cc, err := virtualingress.RenderChartController(nil)
	if err != nil {
		return nil, err
	}
	step(fmt.Sprintf("Starting the status controller as the chart's Deployment runs it: ServiceAccount %s/%s, arguments\n    %s",
		cc.Namespace, cc.ServiceAccount, strings.Join(cc.Args, " ")))
	logFile := filepath.Join(cluster.Dir(), "logs", "status-controller.log")
	f, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(f)))
	cfg, err := cluster.ServiceAccountConfig(ctx, cc.Namespace, cc.ServiceAccount)
	if err != nil {
		return nil, err
	}
	stopController, err := virtualingress.StartStatusController(cfg, cc.Options.KyvernoNamespace, cc.Options)
	if err != nil {
		return nil, err
	}
	fmt.Printf("    (its log: %s)\n", logFile)
	return func() error {
		err := stopController()
		_ = f.Close()
		return err
	}, nil
}
