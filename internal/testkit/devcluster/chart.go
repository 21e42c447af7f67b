package devcluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

// loadChart loads a chart directory without the dependencies it does not vendor (see dropMissingDependencies).
func loadChart(chartDir string) (*chart.Chart, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", chartDir, err)
	}
	dropMissingDependencies(ch)
	return ch, nil
}

// renderChart renders a chart the way `helm template` does and returns the objects of its manifest.
// Hooks are left out: they are Jobs and Pods for install/upgrade/delete steps, which need a kubelet.
// The Kubernetes version is render.KubeVersion, the version of the API server devcluster runs (both read from go.mod).
func renderChart(ch *chart.Chart, releaseName, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	rel, err := renderRelease(ch, releaseName, namespace, values)
	if err != nil {
		return nil, err
	}
	return decodeObjects([]byte(rel.Manifest))
}

// renderRelease is the release renderChart renders, hooks included.
func renderRelease(ch *chart.Chart, releaseName, namespace string, values map[string]any) (*release.Release, error) {
	install, err := render.ClientOnlyInstall(releaseName, namespace)
	if err != nil {
		return nil, err
	}
	// Only the API groups this cluster really serves at render time; the extra groups render.ClientOnlyInstall
	// declares (for this project's charts) could switch on templates of Kyverno's chart for absent APIs.
	install.APIVersions = chartutil.DefaultVersionSet
	rel, err := install.Run(ch, values)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", ch.Name(), err)
	}
	return rel, nil
}

// dropMissingDependencies removes dependencies that come from remote chart repositories and are not
// vendored under charts/ (Kyverno's module ships only its local subcharts). Their conditions are false in
// the values used here; Helm would still refuse a chart whose Chart.yaml lists them.
func dropMissingDependencies(ch *chart.Chart) {
	present := map[string]bool{}
	for _, d := range ch.Dependencies() {
		present[d.Name()] = true
	}
	var deps []*chart.Dependency
	for _, d := range ch.Metadata.Dependencies {
		if present[d.Name] {
			deps = append(deps, d)
		}
	}
	ch.Metadata.Dependencies = deps
}

// decodeObjects splits a multi-document YAML (or JSON) stream into objects, skipping empty documents.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}
