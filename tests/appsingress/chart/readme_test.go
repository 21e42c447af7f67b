package chart

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The README's secondary-network recipe installs the values the chart's ci case renders and the node tier proves
// (static addresses with their MAC addresses), word for word.
func TestReadmeRecipeIsTheSecondaryNetworkCase(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, recipe, found := strings.Cut(string(readme), "cat > vlan-values.yaml <<EOF\n")
	recipe, _, closed := strings.Cut(recipe, "\nEOF\n")
	if !found || !closed {
		t.Fatal("the README has no vlan-values.yaml recipe")
	}
	ci, err := os.ReadFile(filepath.Join(chartDir, "ci", "secondary-network-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var fromReadme, fromCI map[string]any
	if err := yaml.Unmarshal([]byte(recipe), &fromReadme); err != nil {
		t.Fatalf("the README's recipe: %v", err)
	}
	if err := yaml.Unmarshal(ci, &fromCI); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromReadme, fromCI) {
		t.Errorf("the README's recipe:\n%s\ndiffers from ci/secondary-network-values.yaml:\n%s", recipe, ci)
	}
}
