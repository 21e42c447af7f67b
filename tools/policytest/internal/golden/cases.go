package golden

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const (
	ciValuesSuffix = "-values.yaml"
	defaultCase    = "default"
)

// goldenCase is one render of one chart: defaults, or defaults plus one ci/*-values.yaml file (the files
// chart-testing also installs, so every configuration CI deploys has a golden file).
type goldenCase struct {
	Chart       string
	ChartDir    string
	Name        string
	ValuesFiles []string
	// Base is the case whose render this one's golden file is a diff from: the default render, or for a case named
	// <other>-<more> the case <other> (the longest such), so that a case refining another shows only its refinement.
	Base string
}

func (c goldenCase) ID() string { return c.Chart + "/" + c.Name }

func (c goldenCase) isDefault() bool { return c.Name == defaultCase }

// goldenPath is tests/<product>/golden/default.yaml for the default render, which the golden file holds whole, and
// tests/<product>/golden/<case>.diff for a ci case, whose golden file holds only its difference from its base.
func (c goldenCase) goldenPath(testsDir string) string {
	name := c.Name + ".diff"
	if c.isDefault() {
		name = defaultCase + ".yaml"
	}
	return filepath.Join(goldenDir(testsDir, c.Chart), name)
}

// goldenDir is where a chart's golden files live: tests/<product>/golden, beside the product's e2e and bench
// packages. <product> is the chart directory's name without a trailing "-operator" (the operator is how a product
// ships, not what it is) and without dashes (it names Go packages): charts/virtual-ingress -> tests/virtualingress,
// charts/virtualservice-operator -> tests/virtualservice.
func goldenDir(testsDir, chart string) string {
	product := strings.ReplaceAll(strings.TrimSuffix(chart, "-operator"), "-", "")
	return filepath.Join(testsDir, product, "golden")
}

// discoverCases lists the cases of every chart directly under chartsDir, sorted by chart then case.
func discoverCases(chartsDir string) ([]goldenCase, error) {
	entries, err := os.ReadDir(chartsDir)
	if err != nil {
		return nil, err
	}
	var cases []goldenCase
	for _, e := range entries {
		dir := filepath.Join(chartsDir, e.Name())
		if !e.IsDir() || !fileExists(filepath.Join(dir, "Chart.yaml")) {
			continue
		}
		cases = append(cases, goldenCase{Chart: e.Name(), ChartDir: dir, Name: defaultCase})
		valueFiles, err := filepath.Glob(filepath.Join(dir, "ci", "*"+ciValuesSuffix))
		if err != nil {
			return nil, err
		}
		sort.Strings(valueFiles)
		for _, f := range valueFiles {
			name := strings.TrimSuffix(filepath.Base(f), ciValuesSuffix)
			if name == defaultCase {
				// Its golden file would be the defaults' one.
				return nil, fmt.Errorf("%s: a ci values file may not be named default%s", f, ciValuesSuffix)
			}
			cases = append(cases, goldenCase{Chart: e.Name(), ChartDir: dir, Name: name, ValuesFiles: []string{f}})
		}
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("no chart (directory with Chart.yaml) under %s", chartsDir)
	}
	for i, c := range cases {
		if c.isDefault() {
			continue
		}
		base := ""
		for _, other := range cases {
			if other.Chart == c.Chart && !other.isDefault() && strings.HasPrefix(c.Name, other.Name+"-") && len(other.Name) > len(base) {
				base = other.Name
			}
		}
		cases[i].Base = cmp.Or(base, defaultCase)
	}
	return cases, nil
}

func fileExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}
