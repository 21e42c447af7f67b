// Package golden is the golden-file machinery of every chart and the policies/ copy it checks: the golden verb
// compares each chart's renders with tests/<product>/golden, and sync-policies keeps policies/ the virtual-ingress
// chart's Kyverno policies as rendered, with the CEL engine's twin suites and the suites' Services caches, all
// committed whole, which golden checks along with the renders.
package golden

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/junit"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/results"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/textdiff"
)

type goldenOptions struct {
	chartsDir string
	testsDir  string
	update    bool
	junitFile string
	sync      SyncOptions
}

// NewCommand is the golden verb.
func NewCommand() *cobra.Command {
	o := goldenOptions{sync: DefaultSyncOptions()}
	cmd := &cobra.Command{
		Use:   "golden",
		Short: "Compare every chart render (defaults and ci/*-values.yaml) with tests/<product>/golden, and check policies/ is in sync",
		Long: `Renders every chart under --charts (each directory holding a Chart.yaml) as helm template --include-crds does,
with its default values and with each of its ci/<case>-values.yaml files, compares the renders with the chart's
golden files, and checks that --policies-dir is in sync (as sync-policies --check does).

A chart's golden files are in <tests-dir>/<product>/golden/, where <product> is the chart directory's name without
a trailing "-operator" and without dashes (charts/virtual-ingress -> tests/virtualingress/golden/,
charts/virtualservice-operator -> tests/virtualservice/golden/):
  default.yaml   the render with default values, normalised;
  <case>.diff    a diff without context lines from the normalised render of the case's base to the normalised
                 render of the case, each hunk's "@@" line followed by the kind, name and template of the document it
                 changes. The base is the default render, or for a case named <other>-<more> the case <other> (the
                 longest such), so that a case refining another shows only its refinement. Where either renders a
                 template in full, both sides show that template's documents in full, so the diff holds only the
                 lines that change; an object of the base the case does not render (same template, kind and
                 name) is one removed line naming it. Empty: the case renders as its base.
Normalised: a CRD of the chart's crds/ directory is one "# Source:" line naming it (Helm installs the file verbatim:
it is a source file, not a template, so its content is not compared, only whether the chart ships it); a CRD a
template renders from the chart's files/crds/ shows its metadata and, for its spec, a comment naming the file when the
spec is the file's; and a document identical to a file sync-policies generated under --policies-dir is one line
naming that file. A stale
generated file matches nothing: the document then shows in full and fails.
A golden file whose case is gone fails too. --update rewrites the golden files, and deletes those of gone cases;
run sync-policies before it (make golden-update does), or the documents of stale policies are written in full.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGolden(cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().StringVar(&o.chartsDir, "charts", "charts", "directory holding one directory per chart")
	cmd.Flags().StringVar(&o.testsDir, "tests-dir", "tests", "directory holding <product>/golden/ for each chart")
	cmd.Flags().BoolVar(&o.update, "update", false, "rewrite the golden files instead of comparing")
	cmd.Flags().StringVar(&o.junitFile, "junit", "", "also write the results as JUnit XML to this file")
	AddSyncFlags(cmd, &o.sync)
	return cmd
}

func runGolden(out io.Writer, o goldenOptions) error {
	cases, err := discoverCases(o.chartsDir)
	if err != nil {
		return err
	}
	generated, err := generatedBodies(o.sync.outDir)
	if err != nil {
		return err
	}
	plan, err := planSync(o.sync)
	if err != nil {
		return err
	}
	g := goldenRun{options: o, generated: generated, renders: map[string]cachedRender{}}
	var tally results.Tally
	goldenSuite := junit.Suite{Name: "golden"}
	for _, c := range cases {
		tc := g.check(out, c)
		tally.Add(tc)
		goldenSuite.Cases = append(goldenSuite.Cases, tc)
	}
	orphans, err := g.orphans(out, cases)
	if err != nil {
		return err
	}
	for _, tc := range orphans {
		tally.Add(tc)
		goldenSuite.Cases = append(goldenSuite.Cases, tc)
	}
	// A stale policies/ is a stale golden file too: both are the chart's output, committed.
	syncResult := syncCase(out, o.sync, plan, nil)
	tally.Add(syncResult)
	suites := []junit.Suite{goldenSuite, {Name: "sync-policies", Cases: []junit.Case{syncResult}}}
	return tally.Finish(out, o.junitFile, suites)
}

type goldenRun struct {
	options   goldenOptions
	generated map[string]string
	renders   map[string]cachedRender // by case ID: a case's render is also its refinements' base
}

type cachedRender struct {
	render normalRender
	err    error
}

func (g goldenRun) normalised(chartDir string, valuesFiles []string) (normalRender, error) {
	manifest, err := render.Manifest(chartDir, valuesFiles, nil)
	if err != nil {
		return nil, err
	}
	crds, err := chartCRDFiles(chartDir)
	if err != nil {
		return nil, err
	}
	return normalise(manifest, g.generated, crds)
}

// content is what the golden file of a case holds.
func (g goldenRun) content(c goldenCase) (string, error) {
	if c.isDefault() {
		def, err := g.render(c.Chart, c.ChartDir, defaultCase)
		if err != nil {
			return "", err
		}
		return "# Golden file of chart " + c.Chart + ": its render with default values, normalised (see policytest golden --help).\n" +
			def.text(nil), nil
	}
	base, err := g.render(c.Chart, c.ChartDir, c.Base)
	if err != nil {
		return "", err
	}
	r, err := g.render(c.Chart, c.ChartDir, c.Name)
	if err != nil {
		return "", err
	}
	full := r.shownInFull(base.shownInFull(map[string]bool{}))
	base = base.without(r)
	ciFile, baseFile := ciValuesFile(c.Name), defaultCase+".yaml"
	if c.Base != defaultCase {
		baseFile = ciValuesFile(c.Base)
	}
	return "# Golden file of chart " + c.Chart + ", case " + ciFile + " (see policytest golden --help). Empty: renders as its base.\n" +
		textdiff.Headed(baseFile, ciFile, base.text(full), r.text(full), documentHeading), nil
}

// render is the normalised render of a case of a chart, rendered once per run.
func (g goldenRun) render(chart, chartDir, name string) (normalRender, error) {
	key := chart + "/" + name
	cached, ok := g.renders[key]
	if !ok {
		var values []string
		if name != defaultCase {
			values = []string{filepath.Join(chartDir, ciValuesFile(name))}
		}
		cached.render, cached.err = g.normalised(chartDir, values)
		g.renders[key] = cached
	}
	if cached.err != nil && name != defaultCase {
		return nil, fmt.Errorf("rendering %s: %w", ciValuesFile(name), cached.err)
	}
	if cached.err != nil {
		return nil, fmt.Errorf("rendering the defaults: %w", cached.err)
	}
	return cached.render, nil
}

func ciValuesFile(name string) string { return "ci/" + name + ciValuesSuffix }

func (g goldenRun) check(out io.Writer, c goldenCase) junit.Case {
	tc := junit.Case{Name: c.ID(), Classname: "golden." + c.Chart}
	path := c.goldenPath(g.options.testsDir)
	got, err := g.content(c)
	if err != nil {
		tc.Failure = "render failed"
		tc.Details = err.Error()
		results.Report(out, tc, c.ID())
		return tc
	}
	if g.options.update {
		changed, err := WriteIfChanged(path, []byte(got))
		switch {
		case err != nil:
			tc.Failure = "cannot write golden file"
			tc.Details = err.Error()
		case changed:
			tc.Output = "updated " + path
		}
		results.Report(out, tc, c.ID())
		return tc
	}
	want, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err):
		tc.Failure = "missing golden file " + path
		tc.Details = "run `policytest golden -update` and review the new file"
	case err != nil:
		tc.Failure = "cannot read golden file"
		tc.Details = err.Error()
	case string(want) != got:
		tc.Failure = "render differs from " + path
		tc.Details = textdiff.Unified(path, "rendered "+c.ID(), string(want), got) +
			"\nIf the change is intended, run `policytest golden -update`.\n"
	}
	results.Report(out, tc, c.ID())
	return tc
}

// orphans finds the golden files of cases that are gone (a ci values file renamed or removed), which would
// otherwise stay behind unchecked; with --update it deletes them.
func (g goldenRun) orphans(out io.Writer, cases []goldenCase) ([]junit.Case, error) {
	wanted := map[string]bool{}
	chartOf := map[string]string{} // golden directory -> chart
	for _, c := range cases {
		dir := goldenDir(g.options.testsDir, c.Chart)
		if other, ok := chartOf[dir]; ok && other != c.Chart {
			return nil, fmt.Errorf("charts %s and %s would share the golden directory %s", other, c.Chart, dir)
		}
		chartOf[dir] = c.Chart
		wanted[c.goldenPath(g.options.testsDir)] = true
	}
	dirs := make([]string, 0, len(chartOf))
	for dir := range chartOf {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	var found []junit.Case
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			ext := filepath.Ext(e.Name())
			if e.IsDir() || wanted[path] || (ext != ".yaml" && ext != ".diff") {
				continue
			}
			id := chartOf[dir] + "/" + e.Name()
			tc := junit.Case{Name: id, Classname: "golden." + chartOf[dir]}
			if g.options.update {
				if err := os.Remove(path); err != nil {
					tc.Failure = "cannot delete golden file of a gone case"
					tc.Details = err.Error()
				} else {
					tc.Output = "deleted " + path
				}
			} else {
				tc.Failure = "golden file without a case: " + path
				tc.Details = "its ci/*-values.yaml file is gone; delete it, or run `policytest golden -update`"
			}
			results.Report(out, tc, id)
			found = append(found, tc)
		}
	}
	return found, nil
}

// WriteIfChanged leaves files with the right content untouched, so an update does not bump their mtime.
func WriteIfChanged(path string, content []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(path, content, 0o644)
}
