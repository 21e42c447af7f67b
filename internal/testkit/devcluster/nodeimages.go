package devcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// ImportChartImage imports the image `make images` wrote to _output/images/<binary> under the repository a chart's
// values name at imageValues (for example "image" or "controller.image"), so that the chart installs with its normal
// image values. It returns values that keep the node from pulling (pullPolicy Never) to merge into the release's.
func (c *Cluster) ImportChartImage(ctx context.Context, repoRoot, chart, imageValues, binary string) (map[string]any, error) {
	layout := filepath.Join(repoRoot, "_output", "images", binary)
	if _, err := os.Stat(filepath.Join(layout, "index.json")); err != nil {
		return nil, fmt.Errorf("devcluster: no image at %s: run `make images` first", layout)
	}
	img, err := chartImage(repoRoot, chart, imageValues)
	if err != nil {
		return nil, err
	}
	if err := c.ImportImage(ctx, layout, img.repository); err != nil {
		return nil, err
	}
	return img.neverPull, nil
}

// BuildChartImage is ImportChartImage without `make images`: it builds Go main package pkg for this machine only,
// tagged with the chart's appVersion as `make images` tags it.
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
