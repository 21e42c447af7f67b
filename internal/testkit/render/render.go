// Package render renders a Helm chart the way `helm template --include-crds` does, without a cluster, and splits
// the result into documents. The golden tests, the policy sync and the offline preview all go through it, so the
// bytes they compare, commit and evaluate are the same.
package render

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// Namespace is the release namespace of every render: the chart documents installing into it.
const Namespace = "virtual-ingress"

// KubeVersion is the cluster version templates see: the Kubernetes version the repository's go.mod targets, as the
// Makefile passes it to helm lint. The SDK would otherwise claim v1.20, which the chart's kubeVersion constraint
// rejects and which would hide Capabilities-dependent output.
var KubeVersion = sync.OnceValues(func() (string, error) {
	root, err := repo.Root()
	if err != nil {
		return "", err
	}
	return repo.KubeVersion(root)
})

// extraAPIVersions are the API groups of the clusters the chart targets; templates may test for them with
// .Capabilities.APIVersions.Has, and a render must not depend on the machine it runs on.
var extraAPIVersions = []string{
	"kyverno.io/v1",
	"kyverno.io/v2",
	"policies.kyverno.io/v1",
	"policies.kyverno.io/v1beta1",
	"policies.kyverno.io/v1alpha1",
	"networking.istio.io/v1",
	"monitoring.coreos.com/v1",
}

// Manifest renders chartDir with the values files merged in order and then extra merged on top, and returns the
// manifest `helm template --include-crds` would print: CRDs, then templates in Helm's install order, then hooks.
// The release is named after the chart.
func Manifest(chartDir string, valuesFiles []string, extra map[string]any) (string, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return "", fmt.Errorf("loading chart %s: %w", chartDir, err)
	}
	vals, err := mergeValues(valuesFiles, extra)
	if err != nil {
		return "", err
	}
	install, err := ClientOnlyInstall(chrt.Name(), Namespace)
	if err != nil {
		return "", err
	}
	install.IncludeCRDs = true
	rel, err := install.Run(chrt, vals)
	if err != nil {
		return "", fmt.Errorf("rendering chart %s: %w", chartDir, err)
	}
	var b strings.Builder
	b.WriteString(rel.Manifest)
	// Hooks are not part of rel.Manifest; helm template prints them after it, in the order Helm sorted them.
	for _, h := range rel.Hooks {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return b.String(), nil
}

// Render is Manifest split into documents.
func Render(chartDir string, valuesFiles []string, extra map[string]any) ([]Document, error) {
	manifest, err := Manifest(chartDir, valuesFiles, extra)
	if err != nil {
		return nil, err
	}
	return Split(manifest)
}

// ClientOnlyInstall is the install action `helm template` runs: no cluster, Capabilities fixed to KubeVersion and the
// API groups the charts here target. Callers set what else they need (IncludeCRDs) and call Run.
func ClientOnlyInstall(releaseName, namespace string) (*action.Install, error) {
	version, err := KubeVersion()
	if err != nil {
		return nil, err
	}
	kubeVersion, err := chartutil.ParseKubeVersion(version)
	if err != nil {
		return nil, err
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun = true
	install.ClientOnly = true
	install.Replace = true
	install.ReleaseName = releaseName
	install.Namespace = namespace
	install.KubeVersion = kubeVersion
	install.APIVersions = append(chartutil.VersionSet{}, chartutil.DefaultVersionSet...)
	install.APIVersions = append(install.APIVersions, extraAPIVersions...)
	return install, nil
}

func mergeValues(valuesFiles []string, extra map[string]any) (map[string]any, error) {
	// No getter providers: values files are local paths only, never URLs.
	opts := values.Options{ValueFiles: valuesFiles}
	vals, err := opts.MergeValues(nil)
	if err != nil {
		return nil, fmt.Errorf("reading values: %w", err)
	}
	return mergeMaps(vals, extra), nil
}

// mergeMaps merges b into a the way Helm merges values files: maps merge key by key, anything else replaces.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bv, ok := v.(map[string]any); ok {
			if av, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(av, bv)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// Cases are the values files a chart is tested with, by name: none ("default"), then each ci/<name>-values.yaml
// alone, as `make helm-lint` and the golden files take them.
func Cases(chartDir string) (map[string][]string, error) {
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil {
		return nil, err
	}
	cases := map[string][]string{"default": nil}
	for _, f := range files {
		cases[strings.TrimSuffix(filepath.Base(f), "-values.yaml")] = []string{f}
	}
	return cases, nil
}
