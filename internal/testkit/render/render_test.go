package render

import (
	"strings"
	"testing"
)

const capsChart = "testdata/caps"

func renderCaps(t *testing.T, valuesFiles []string, extra map[string]any) map[string]Document {
	t.Helper()
	docs, err := Render(capsChart, valuesFiles, extra)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Document{}
	for _, d := range docs {
		byName[d.Object.GetName()] = d
	}
	return byName
}

func TestTemplatesSeeTheTargetClusterNotTheLibraryDefaults(t *testing.T) {
	data := renderCaps(t, nil, nil)["caps-capabilities"].Object.Object["data"].(map[string]any)
	want := map[string]string{
		"kubeVersion":      "v1.36.3",
		"kyverno":          "true",
		"policiesV1alpha1": "true",
		"istio":            "true",
		"prometheus":       "true",
		"core":             "true",
		"unknown":          "false",
	}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("%s = %v, want %s", k, data[k], v)
		}
	}
}

func TestReleaseIsNamedAfterTheChartInTheFixedNamespace(t *testing.T) {
	d, ok := renderCaps(t, nil, nil)["caps-capabilities"]
	if !ok {
		t.Fatal("no ConfigMap caps-capabilities: the release is not named after the chart")
	}
	if got := d.Object.GetNamespace(); got != Namespace {
		t.Errorf("namespace %q, want %q", got, Namespace)
	}
}

func TestValuesMergeFilesThenExtraOverChartDefaults(t *testing.T) {
	data := func(docs map[string]Document) map[string]any {
		return docs["caps-capabilities"].Object.Object["data"].(map[string]any)
	}
	fromFile := data(renderCaps(t, []string{capsChart + "/override-values.yaml"}, nil))
	if fromFile["replaced"] != "from-file" || fromFile["kept"] != "from-chart" {
		t.Errorf("values file not deep-merged: %v", fromFile)
	}
	fromExtra := data(renderCaps(t, []string{capsChart + "/override-values.yaml"},
		map[string]any{"nested": map[string]any{"replaced": "from-extra"}}))
	if fromExtra["replaced"] != "from-extra" || fromExtra["kept"] != "from-chart" {
		t.Errorf("extra values not deep-merged on top: %v", fromExtra)
	}
}

func TestManifestHasCRDsFirstAndHooksLast(t *testing.T) {
	m, err := Manifest(capsChart, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	crd := strings.Index(m, "# Source: caps/crds/widgets.example.com.yaml")
	template := strings.Index(m, "# Source: caps/templates/capabilities.yaml")
	hook := strings.Index(m, "# Source: caps/templates/hook.yaml")
	if crd < 0 || template < 0 || hook < 0 || crd >= template || template >= hook {
		t.Fatalf("want CRD < templates < hook, got offsets %d %d %d in:\n%s", crd, template, hook, m)
	}
	for i := 0; i < 5; i++ {
		again, err := Manifest(capsChart, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if again != m {
			t.Fatal("two renders of the same chart differ")
		}
	}
}

func TestDocumentsKeepCommentsButNotSourceLines(t *testing.T) {
	docs := renderCaps(t, nil, nil)
	first := docs["first"]
	if first.Source != "caps/templates/two-documents.yaml" {
		t.Errorf("source %q", first.Source)
	}
	if !strings.HasPrefix(first.YAML, "# First document, with a comment that must survive.\napiVersion: v1\n") {
		t.Errorf("comment lost or source line kept:\n%s", first.YAML)
	}
	crd := docs["widgets.example.com"]
	if crd.Source != "caps/crds/widgets.example.com.yaml" || !strings.HasPrefix(crd.YAML, "# A comment before the CRD.\n") {
		t.Errorf("CRD document: source %q, yaml:\n%s", crd.Source, crd.YAML)
	}
	for name, d := range docs {
		if strings.Contains(d.YAML, sourcePrefix) {
			t.Errorf("%s keeps a Source line", name)
		}
		if !strings.HasSuffix(d.YAML, "\n") || strings.HasSuffix(d.YAML, "\n\n") {
			t.Errorf("%s does not end in exactly one newline: %q", name, d.YAML)
		}
	}
	// CRD, two ServiceAccounts, ConfigMap, hook; the comment-only document is not one.
	if len(docs) != 5 {
		t.Errorf("got %d documents, want 5: %v", len(docs), keys(docs))
	}
}

func TestSplitInheritsSourceAndReportsBadYAML(t *testing.T) {
	docs, err := Split("---\n# Source: c/crds/two.yaml\nkind: A\nmetadata: {name: a}\n---\nkind: B\nmetadata: {name: b}\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[1].Source != "c/crds/two.yaml" {
		t.Fatalf("second document of a file lost its source: %+v", docs)
	}
	_, err = Split("---\n# Source: c/templates/bad.yaml\nkind: [unclosed\n")
	if err == nil || !strings.Contains(err.Error(), "c/templates/bad.yaml") {
		t.Fatalf("want an error naming the source, got %v", err)
	}
}

func TestMissingChartIsAnError(t *testing.T) {
	if _, err := Render("testdata/no-such-chart", nil, nil); err == nil {
		t.Fatal("no error for a missing chart")
	}
}

func keys(m map[string]Document) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
