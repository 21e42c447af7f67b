package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/junit"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

type goldenOptions struct {
	chartsDir string
	goldenDir string
	update    bool
	junitFile string
	sync      syncOptions
}

func newGoldenCommand() *cobra.Command {
	o := goldenOptions{sync: defaultSyncOptions()}
	cmd := &cobra.Command{
		Use:   "golden",
		Short: "Compare every chart render (defaults and ci/*-values.yaml) with tests/golden, and check policies/ is in sync",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGolden(cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().StringVar(&o.chartsDir, "charts", "charts", "directory holding one directory per chart")
	cmd.Flags().StringVar(&o.goldenDir, "golden-dir", "tests/golden", "directory of the golden files (<chart>/<case>.yaml)")
	cmd.Flags().BoolVar(&o.update, "update", false, "rewrite the golden files instead of comparing")
	cmd.Flags().StringVar(&o.junitFile, "junit", "", "also write the results as JUnit XML to this file")
	addSyncFlags(cmd, &o.sync)
	return cmd
}

func runGolden(out io.Writer, o goldenOptions) error {
	cases, err := discoverCases(o.chartsDir)
	if err != nil {
		return err
	}
	var tally tally
	goldenSuite := junit.Suite{Name: "golden"}
	for _, c := range cases {
		tc := checkGoldenCase(out, c, o)
		tally.add(tc)
		goldenSuite.Cases = append(goldenSuite.Cases, tc)
	}
	// A stale policies/ is a stale golden file too: both are the chart's output, committed.
	syncCase := checkSyncCase(out, o.sync)
	tally.add(syncCase)
	suites := []junit.Suite{goldenSuite, {Name: "sync-policies", Cases: []junit.Case{syncCase}}}
	return tally.finish(out, o.junitFile, suites)
}

func checkGoldenCase(out io.Writer, c goldenCase, o goldenOptions) junit.Case {
	tc := junit.Case{Name: c.ID(), Classname: "golden." + c.Chart}
	path := c.goldenPath(o.goldenDir)
	manifest, err := render.Manifest(c.ChartDir, c.ValuesFiles, nil)
	if err != nil {
		tc.Failure = "render failed"
		tc.Details = err.Error()
		report(out, tc, c.ID())
		return tc
	}
	if o.update {
		changed, err := writeIfChanged(path, []byte(manifest))
		switch {
		case err != nil:
			tc.Failure = "cannot write golden file"
			tc.Details = err.Error()
		case changed:
			tc.Output = "updated " + path
		}
		report(out, tc, c.ID())
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
	case string(want) != manifest:
		tc.Failure = "render differs from " + path
		tc.Details = unifiedDiff(path, "rendered "+c.ID(), string(want), manifest) +
			"\nIf the change is intended, run `policytest golden -update`.\n"
	}
	report(out, tc, c.ID())
	return tc
}

func unifiedDiff(fromName, toName, from, to string) string {
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        difflib.SplitLines(from),
		B:        difflib.SplitLines(to),
		FromFile: fromName,
		ToFile:   toName,
		Context:  3,
	})
	if err != nil {
		return fmt.Sprintf("(no diff: %v)", err)
	}
	return diff
}

// writeIfChanged leaves files with the right content untouched, so an update does not bump their mtime.
func writeIfChanged(path string, content []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(path, content, 0o644)
}
