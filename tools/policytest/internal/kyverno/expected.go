package kyverno

import (
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/golden"
)

// expectedRows is how many result rows `kyverno test` must print for the suite in dir: one per resource of each
// result. The CLI prints no row at all for a result whose policy failed to apply (a rule that errors is logged and
// skipped), so a suite can print fewer rows than it declares and still report every printed row as passed.
func expectedRows(dir string) (int, error) {
	raw, err := os.ReadFile(filepath.Join(dir, golden.KyvernoTestFile))
	if err != nil {
		return 0, err
	}
	var suite struct {
		Results []struct {
			Resources []string `json:"resources"`
		} `json:"results"`
	}
	if err := yaml.Unmarshal(raw, &suite); err != nil {
		return 0, err
	}
	rows := 0
	for _, r := range suite.Results {
		rows += max(1, len(r.Resources))
	}
	return rows, nil
}
