// Package helmrelease installs, upgrades and uninstalls a local chart, or one pulled from an OCI registry, with Helm's
// SDK (what the helm CLI runs), for the end-to-end tests, the benchmark and the demo.
package helmrelease

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/registry"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Release drives one release of a local chart with Helm's own install/upgrade/uninstall actions, the code path of
// the helm CLI.
type Release struct {
	name      string
	namespace string
	cfg       *action.Configuration
	chart     *chart.Chart
}

// New prepares release name in namespace of the chart in chartDir, against the cluster of kubeconfig.
func New(kubeconfig, chartDir, name, namespace string) (*Release, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("loading chart: %w", err)
	}
	return ForChart(kubeconfig, ch, name, namespace)
}

// ForChart is New for a chart already loaded (and perhaps adjusted, as a chart whose remote dependencies are not
// vendored must be).
func ForChart(kubeconfig string, ch *chart.Chart, name, namespace string) (*Release, error) {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	// Beside the kubeconfig, in the cluster's own directory: Helm's discovery cache would otherwise go to ~/.kube/cache.
	cacheDir := filepath.Join(filepath.Dir(kubeconfig), "kube-cache")
	flags.CacheDir = &cacheDir
	flags.Namespace = &namespace
	cfg := new(action.Configuration)
	// Helm's debug log (one line per object it creates) is noise here; errors come back as values.
	if err := cfg.Init(flags, namespace, "secret", func(string, ...any) {}); err != nil {
		return nil, err
	}
	return &Release{name: name, namespace: namespace, cfg: cfg, chart: ch}, nil
}

// Install installs the release, creating its namespace.
func (h *Release) Install(ctx context.Context, values map[string]any) error {
	return h.install(ctx, values, 0)
}

// InstallWait is `helm install --wait --timeout`: it returns once every Deployment, StatefulSet, DaemonSet, Pod,
// PVC and Service of the release is ready (on a cluster with a node), or fails after timeout.
func (h *Release) InstallWait(ctx context.Context, values map[string]any, timeout time.Duration) error {
	return h.install(ctx, values, timeout)
}

// install waits as --wait does when wait is positive.
func (h *Release) install(ctx context.Context, values map[string]any, wait time.Duration) error {
	install := action.NewInstall(h.cfg)
	install.ReleaseName = h.name
	install.Namespace = h.namespace
	install.CreateNamespace = true
	install.Wait, install.Timeout = wait > 0, wait
	_, err := install.RunWithContext(ctx, h.chart, values)
	return err
}

// Upgrade applies values on top of the chart defaults (like `helm upgrade --reset-values -f`), so each call states
// the whole configuration under test.
func (h *Release) Upgrade(ctx context.Context, values map[string]any) error {
	return h.upgrade(ctx, values, 0, false)
}

// UpgradeTakingOwnership is Upgrade with `--take-ownership`: the release adopts the objects of its render that exist
// without being any release's (a chart's CRDs that an older version installed from crds/).
func (h *Release) UpgradeTakingOwnership(ctx context.Context, values map[string]any) error {
	return h.upgrade(ctx, values, 0, true)
}

// UpgradeWait is Upgrade with `--wait --timeout`.
func (h *Release) UpgradeWait(ctx context.Context, values map[string]any, timeout time.Duration) error {
	return h.upgrade(ctx, values, timeout, false)
}

// UpgradeChartWait is `helm upgrade --wait --timeout` to another version of the chart (ch); later upgrades use ch.
func (h *Release) UpgradeChartWait(ctx context.Context, ch *chart.Chart, values map[string]any, timeout time.Duration) error {
	previous := h.chart
	h.chart = ch
	if err := h.upgrade(ctx, values, timeout, false); err != nil {
		h.chart = previous
		return err
	}
	return nil
}

func (h *Release) upgrade(ctx context.Context, values map[string]any, wait time.Duration, takeOwnership bool) error {
	upgrade := action.NewUpgrade(h.cfg)
	upgrade.Namespace = h.namespace
	upgrade.ResetValues = true
	upgrade.TakeOwnership = takeOwnership
	upgrade.Wait, upgrade.Timeout = wait > 0, wait
	_, err := upgrade.RunWithContext(ctx, h.name, h.chart, values)
	return err
}

// Notes is what `helm upgrade --dry-run=server` prints as the release's notes with these values: rendered against
// the cluster (lookup reads it), nothing changed.
func (h *Release) Notes(ctx context.Context, values map[string]any) (string, error) {
	upgrade := action.NewUpgrade(h.cfg)
	upgrade.Namespace = h.namespace
	upgrade.ResetValues = true
	upgrade.DryRun, upgrade.DryRunOption = true, "server"
	rel, err := upgrade.RunWithContext(ctx, h.name, h.chart, values)
	if err != nil {
		return "", err
	}
	return rel.Info.Notes, nil
}

// Test runs the release's `helm test` hooks and returns their Pods' logs on failure.
func (h *Release) Test(ctx context.Context, timeout time.Duration) error {
	test := action.NewReleaseTesting(h.cfg)
	test.Namespace = h.namespace
	test.Timeout = timeout
	rel, err := test.Run(h.name)
	if err != nil {
		var logs strings.Builder
		if rel != nil {
			_ = test.GetPodLogs(&logs, rel)
		}
		return fmt.Errorf("helm test %s: %w\n%s", h.name, err, logs.String())
	}
	return nil
}

// Uninstall removes the release.
func (h *Release) Uninstall() error {
	_, err := action.NewUninstall(h.cfg).Run(h.name)
	return err
}

// ForChartName is ForChart with the release named after the chart and installed into the namespace of that name, as
// the READMEs' `helm install` commands do.
func ForChartName(kubeconfig string, ch *chart.Chart) (*Release, error) {
	return ForChart(kubeconfig, ch, ch.Name(), ch.Name())
}

// PullOCI is `helm pull oci://<ref> --version <version> --ca-file <caFile>` through Helm's registry client: the
// chart a registry serves, trusting caFile for it, with Helm's registry configuration kept in configDir.
func PullOCI(ref, version, caFile, configDir string) (*chart.Chart, error) {
	client, err := registry.NewRegistryClientWithTLS(io.Discard, "", "", caFile, false, filepath.Join(configDir, "registry.json"), false)
	if err != nil {
		return nil, err
	}
	res, err := client.Pull(strings.TrimPrefix(ref, "oci://")+":"+version, registry.PullOptWithChart(true))
	if err != nil {
		return nil, fmt.Errorf("helm pull %s --version %s: %w", ref, version, err)
	}
	return loader.LoadArchive(bytes.NewReader(res.Chart.Data))
}

// ForRepoChart prepares the release of charts/<chart> of this repository, named after the chart and installed into
// the namespace of that name, as the README's `helm install` does.
func ForRepoChart(kubeconfig, repoRoot, chart string) (*Release, error) {
	return New(kubeconfig, filepath.Join(repoRoot, "charts", chart), chart, chart)
}
