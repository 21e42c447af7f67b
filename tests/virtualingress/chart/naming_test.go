package chart

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

// TestFullnameOverrideAndCommonLabelsChangeOnlyNamesAndLabels: fullnameOverride renames every object the chart names
// after its release, and every reference to one (roleRefs, subjects, the policies' caches and Service names), and
// commonLabels lands on every object, while nothing else of the render changes. The override is a word the default
// render does not hold, so turning it back into the default name must give the default render exactly.
func TestFullnameOverrideAndCommonLabelsChangeOnlyNamesAndLabels(t *testing.T) {
	const fullname, override = "virtual-ingress", "nimbus"
	def, err := render.Manifest(chartDir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(def, override) {
		t.Fatalf("the default render holds %q: pick another override", override)
	}
	custom, err := render.Manifest(chartDir, nil, map[string]any{
		"fullnameOverride": override,
		"commonLabels":     map[string]any{"team": "nimbus-platform"},
	})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := render.Split(custom)
	if err != nil {
		t.Fatal(err)
	}
	renamed := 0
	for _, d := range docs {
		if got := d.Object.GetLabels()["team"]; got != "nimbus-platform" {
			t.Errorf("%s %s: commonLabels missing (team=%q)", d.Object.GetKind(), d.Object.GetName(), got)
		}
		if strings.HasPrefix(d.Object.GetName(), override) {
			renamed++
		}
	}
	if renamed < 20 {
		t.Errorf("only %d objects are named after the override", renamed)
	}
	// And no name is written out instead of derived: what still reads "virtual-ingress-" or "virtual-ingress:" is
	// the chart's version label, the image's repository, or the release namespace qualifying a renamed subject.
	for _, m := range regexp.MustCompile(`(.)virtual-ingress[-:](\S*)`).FindAllStringSubmatch(custom, -1) {
		before, after := m[1], m[2]
		if before == "/" || (after != "" && after[0] >= '0' && after[0] <= '9') || strings.HasPrefix(after, override) {
			continue
		}
		t.Errorf("a name ignores fullnameOverride: %q", strings.TrimSpace(m[0]))
	}
	// The label's lines (in metadata.labels, and in Pod templates' labels) out, the override back to the default name.
	back := strings.ReplaceAll(regexp.MustCompile(`(?m)^ *team: nimbus-platform\n`).ReplaceAllString(custom, ""), override, fullname)
	if back != def {
		t.Errorf("beyond names and labels, the render changed:\n%s", firstDifference(def, back))
	}
}

// firstDifference shows a few lines around the first line where two texts differ.
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:", i+1) + "\n- " + al[i] + "\n+ " + bl[i]
		}
	}
	return "one text is longer"
}
