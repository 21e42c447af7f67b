package devcluster

import (
	"context"
	"fmt"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
)

// InstallRepoChart is `helm install <chart> charts/<chart>` of this repository with Helm's SDK (release and namespace
// named after the chart, default values), followed by a wait until Kyverno reports every policy of the chart
// (label app.kubernetes.io/part-of=<chart>) ready. The release is returned for upgrades and uninstall.
func (c *Cluster) InstallRepoChart(ctx context.Context, repoRoot, chart string) (*helmrelease.Release, error) {
	return c.InstallRepoChartWithValues(ctx, repoRoot, chart, nil)
}

// InstallRepoChartWithValues is InstallRepoChart with `--set`-style values (nil: the chart's defaults).
func (c *Cluster) InstallRepoChartWithValues(ctx context.Context, repoRoot, chart string, values map[string]any) (*helmrelease.Release, error) {
	release, err := helmrelease.ForRepoChart(c.Kubeconfig(), repoRoot, chart)
	if err != nil {
		return nil, err
	}
	if err := release.Install(ctx, values); err != nil {
		return nil, fmt.Errorf("helm install %s: %w", chart, err)
	}
	if err := c.WaitPoliciesReady(ctx, "app.kubernetes.io/part-of="+chart); err != nil {
		return nil, err
	}
	return release, nil
}
