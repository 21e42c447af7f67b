package chart

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
)

// The chart README's `kubectl get` examples show what kubectl prints: the columns of the CRD's default printer
// columns, and a READY of True only with the reason the status controller gives it.
func TestReadmeTablesAreWhatKubectlShows(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md.gotmpl"))
	if err != nil {
		t.Fatal(err)
	}
	columns := map[string][]string{
		"vi":  printerColumns(t, "virtual-ingress.io_virtualingresses.yaml"),
		"vhr": printerColumns(t, "virtualhttproutes.virtual-ingress.io.yaml"),
	}
	upToDate := map[string]string{"vi": "IngressUpToDate", "vhr": "HTTPRouteUpToDate"}
	command := regexp.MustCompile(`^\$ kubectl get (vi|vhr)\b`)
	lines := strings.Split(string(readme), "\n")
	found := map[string]bool{}
	for i, line := range lines {
		m := command.FindStringSubmatch(line)
		if m == nil || i+1 >= len(lines) {
			continue
		}
		kind := m[1]
		found[kind] = true
		header := strings.Fields(lines[i+1])
		if strings.Join(header, " ") != strings.Join(columns[kind], " ") {
			t.Errorf("README line %d: `%s` prints the columns %v, not %v", i+2, line, columns[kind], header)
			continue
		}
		ready, reason := indexOf(header, "READY"), indexOf(header, "REASON")
		for j := i + 2; j < len(lines) && strings.TrimSpace(lines[j]) != "" && !strings.HasPrefix(lines[j], "```"); j++ {
			row := strings.Fields(lines[j])
			if len(row) < len(header) {
				continue
			}
			// A JSON list column (HOSTNAMES) is one field here: its items are separated without spaces.
			if row[ready] == "True" && row[reason] != upToDate[kind] {
				t.Errorf("README line %d: READY True with reason %s; the status controller says %s", j+1, row[reason], upToDate[kind])
			}
		}
	}
	for kind := range columns {
		if !found[kind] {
			t.Errorf("the README has no `kubectl get %s` example", kind)
		}
	}
}

// printerColumns are the column headers `kubectl get` prints for a CRD: NAME, then the columns of priority 0.
func printerColumns(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir, "files", "crds", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	out := []string{"NAME"}
	for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
		if c.Priority == 0 {
			out = append(out, strings.ToUpper(c.Name))
		}
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// The Kyverno values the README asks users for are the ones the test clusters install Kyverno with, word for word.
func TestReadmeShowsTheKyvernoValuesTheClustersRun(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md.gotmpl"))
	if err != nil {
		t.Fatal(err)
	}
	values, err := os.ReadFile(filepath.Join(chartDir, "..", "..", filepath.FromSlash(devcluster.KyvernoValuesFile)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```yaml\n"+string(values)+"```\n") {
		t.Errorf("README.md.gotmpl does not show %s as a yaml block, word for word", devcluster.KyvernoValuesFile)
	}
}
