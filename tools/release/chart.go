package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

// releasedChart is a chart packaged for one release.
type releasedChart struct {
	name    string
	tgz     []byte
	image   string // the default image repository the packaged values name
	version string
}

// packageChart loads charts/<name> as `helm package` does (.helmignore applies) and makes it the chart of this
// release: version and appVersion are the release's (the image tag defaults to appVersion), and the default image
// repository is where this release pushes binary's image, so `helm install oci://...` of the pushed chart runs the
// pushed image with no values set.
func packageChart(chartsDir, name, binary, registry, version string, prerelease bool) (releasedChart, error) {
	c, err := loader.Load(filepath.Join(chartsDir, name))
	if err != nil {
		return releasedChart{}, err
	}
	c.Metadata.Version = version
	c.Metadata.AppVersion = version
	if _, ok := c.Metadata.Annotations["artifacthub.io/prerelease"]; ok {
		c.Metadata.Annotations["artifacthub.io/prerelease"] = strconv.FormatBool(prerelease)
	}
	image := registry + "/" + binary
	if err := setDefaultImage(c, defaultRegistry+"/"+binary, image); err != nil {
		return releasedChart{}, fmt.Errorf("chart %s: %w", name, err)
	}
	if err := c.Validate(); err != nil {
		return releasedChart{}, fmt.Errorf("chart %s: %w", name, err)
	}
	dir, err := os.MkdirTemp("", "release-chart-")
	if err != nil {
		return releasedChart{}, err
	}
	defer os.RemoveAll(dir)
	file, err := chartutil.Save(c, dir)
	if err != nil {
		return releasedChart{}, err
	}
	tgz, err := os.ReadFile(file)
	if err != nil {
		return releasedChart{}, err
	}
	return releasedChart{name: name, tgz: tgz, image: image, version: version}, nil
}

// setDefaultImage replaces the one occurrence of from in values.yaml by to. The file is edited as text so that its
// comments (which `helm show values` prints) stay; exactly one occurrence is required, so a chart that stops naming
// its image the documented way fails the release instead of shipping an image nobody pushed.
func setDefaultImage(c *chart.Chart, from, to string) error {
	for _, f := range c.Raw {
		if f.Name != chartutil.ValuesfileName {
			continue
		}
		if n := bytes.Count(f.Data, []byte(from)); n != 1 {
			return fmt.Errorf("values.yaml names %s %d times, want exactly once (as the image repository)", from, n)
		}
		f.Data = bytes.Replace(f.Data, []byte(from), []byte(to), 1)
		values, err := chartutil.ReadValues(f.Data)
		if err != nil {
			return err
		}
		c.Values = values
		return nil
	}
	return fmt.Errorf("no %s", chartutil.ValuesfileName)
}
