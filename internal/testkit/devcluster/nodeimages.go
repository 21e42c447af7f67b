package devcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// BuildChartImage builds Go main package pkg for this machine only into the node's containerd, under the image
// repository a chart's values name at imageValues (for example "image" or "controller.image") and tagged with the
// chart's appVersion as `make images` tags it, for the benches and demos that do not go through a registry. It
// returns values that keep the node from pulling (pullPolicy Never) to merge into the release's.
func (c *Cluster) BuildChartImage(ctx context.Context, repoRoot, chart, imageValues, pkg string) (map[string]any, error) {
	img, err := chartImage(repoRoot, chart, imageValues)
	if err != nil {
		return nil, err
	}
	if err := c.BuildImage(ctx, pkg, img.repository+":"+img.appVersion); err != nil {
		return nil, err
	}
	return img.neverPull, nil
}

type chartImageRef struct {
	repository, appVersion string
	neverPull              map[string]any
}

// chartImage reads the image repository a chart's values give at imageValues.
func chartImage(repoRoot, chart, imageValues string) (chartImageRef, error) {
	ch, err := loader.Load(filepath.Join(repoRoot, "charts", chart))
	if err != nil {
		return chartImageRef{}, err
	}
	values := ch.Values
	path := strings.Split(imageValues, ".")
	for _, key := range path {
		next, ok := values[key].(map[string]any)
		if !ok {
			return chartImageRef{}, fmt.Errorf("devcluster: chart %s has no map %s in its values", chart, imageValues)
		}
		values = next
	}
	repository, _ := values["repository"].(string)
	if repository == "" {
		return chartImageRef{}, fmt.Errorf("devcluster: chart %s has no %s.repository", chart, imageValues)
	}
	override := map[string]any{"pullPolicy": "Never"}
	for i := len(path) - 1; i >= 0; i-- {
		override = map[string]any{path[i]: override}
	}
	return chartImageRef{repository: repository, appVersion: ch.Metadata.AppVersion, neverPull: override}, nil
}
