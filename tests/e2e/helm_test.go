//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"log"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

const (
	releaseName      = "virtual-ingress"
	releaseNamespace = "virtual-ingress"
)

// helmRelease drives the chart with Helm's own install/upgrade/uninstall actions against the devcluster, the
// same code path as the helm CLI.
type helmRelease struct {
	cfg   *action.Configuration
	chart *chart.Chart
}

func newHelmRelease(kubeconfig, chartDir string) (*helmRelease, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("loading chart: %w", err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	ns := releaseNamespace
	flags.Namespace = &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, releaseNamespace, "secret", log.Printf); err != nil {
		return nil, err
	}
	return &helmRelease{cfg: cfg, chart: ch}, nil
}

func (h *helmRelease) install(ctx context.Context, values map[string]any) error {
	install := action.NewInstall(h.cfg)
	install.ReleaseName = releaseName
	install.Namespace = releaseNamespace
	install.CreateNamespace = true
	_, err := install.RunWithContext(ctx, h.chart, values)
	return err
}

// upgrade applies values on top of the chart defaults (like `helm upgrade --reset-values -f`), so each call states
// the whole configuration under test.
func (h *helmRelease) upgrade(ctx context.Context, values map[string]any) error {
	upgrade := action.NewUpgrade(h.cfg)
	upgrade.Namespace = releaseNamespace
	upgrade.ResetValues = true
	_, err := upgrade.RunWithContext(ctx, releaseName, h.chart, values)
	return err
}

func (h *helmRelease) uninstall() error {
	_, err := action.NewUninstall(h.cfg).Run(releaseName)
	return err
}
