package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// installOnNode is `helm install --wait` of the chart with the status controller's image built for this machine:
// the chart's Deployment runs it as a Pod, with its ServiceAccount, RBAC, probes and securityContext.
func installOnNode(ctx context.Context, cluster *devcluster.Cluster, root string, kube kubernetes.Interface) error {
	step("Building the status controller's image (tools/images) and importing it into the node's containerd")
	values, err := cluster.BuildChartImage(ctx, root, chart, "controller.image", "./cmd/virtual-ingress-controller")
	if err != nil {
		return err
	}
	step("helm install --wait virtual-ingress ./charts/virtual-ingress   (controller.image.pullPolicy=Never)")
	release, err := helmrelease.ForRepoChart(cluster.Kubeconfig(), root, chart)
	if err != nil {
		return err
	}
	begin := time.Now()
	if err := release.InstallWait(ctx, values, 3*time.Minute); err != nil {
		return fmt.Errorf("helm install --wait: %w", err)
	}
	if err := cluster.WaitPoliciesReady(ctx, "app.kubernetes.io/part-of="+chart); err != nil {
		return err
	}
	pods, err := kube.CoreV1().Pods(chart).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=status-controller"})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		fmt.Printf("    status controller Pod %s/%s %s on %s, Ready %s after helm install began\n", p.Namespace, p.Name,
			p.Status.Phase, p.Spec.NodeName, since(begin))
	}
	return nil
}

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
