// Package kyverno is the kyverno verb: it runs the `kyverno test` suites of policies/ with the Kyverno CLI's own
// command, in-process, and reports each result row as a test case.
package kyverno

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	kyvernotest "github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/commands/test"
	"github.com/spf13/cobra"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/golden"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/junit"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/results"
)

// NewCommand is the kyverno verb.
func NewCommand() *cobra.Command {
	var junitFile string
	cmd := &cobra.Command{
		Use:   "kyverno [dir...]",
		Short: "Run every kyverno-test.yaml under the directories (default: policies) with the Kyverno CLI, in-process",
		Long: `Runs every kyverno-test.yaml under the directories (default: policies) with the Kyverno CLI, in-process, as
committed: every file the suites read is in the tree (sync-policies writes the generated ones, golden checks them).`,
		RunE: func(cmd *cobra.Command, dirs []string) error {
			if len(dirs) == 0 {
				dirs = []string{"policies"}
			}
			return runKyverno(cmd.OutOrStdout(), dirs, junitFile)
		},
	}
	cmd.Flags().StringVar(&junitFile, "junit", "", "also write the results as JUnit XML to this file")
	return cmd
}

func runKyverno(out io.Writer, dirs []string, junitFile string) error {
	suites, err := discoverSuites(dirs)
	if err != nil {
		return err
	}
	var tally results.Tally
	var junitSuites []junit.Suite
	for _, dir := range suites {
		js := junit.Suite{Name: dir}
		for _, c := range runKyvernoSuite(dir) {
			tally.Add(c)
			js.Cases = append(js.Cases, c)
			results.Report(out, c, c.Classname+"  "+c.Name)
		}
		junitSuites = append(junitSuites, js)
	}
	return tally.Finish(out, junitFile, junitSuites)
}

// discoverSuites finds the directories holding a kyverno-test.yaml. `kyverno test <dir>` also runs every suite
// below dir, so a suite nested in another would run (and count) twice; that layout is refused.
func discoverSuites(dirs []string) ([]string, error) {
	seen := map[string]bool{}
	var suites []string
	for _, root := range dirs {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && d.Name() == golden.KyvernoTestFile {
				dir := filepath.Dir(path)
				if !seen[dir] {
					seen[dir] = true
					suites = append(suites, dir)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(suites)
	for i := 1; i < len(suites); i++ {
		for _, outer := range suites[:i] {
			if strings.HasPrefix(suites[i], outer+string(filepath.Separator)) {
				return nil, fmt.Errorf("suite %s is nested in suite %s; kyverno test would run it twice, move it beside it", suites[i], outer)
			}
		}
	}
	if len(suites) == 0 {
		return nil, fmt.Errorf("no %s under %s", golden.KyvernoTestFile, strings.Join(dirs, ", "))
	}
	return suites, nil
}

// testsFailed is the error kyverno test returns when results, already printed as rows, did not match.
var testsFailed = regexp.MustCompile(`^\d+ tests failed$`)

// runKyvernoSuite runs `kyverno test <dir>` with the Kyverno CLI's own command, so results are exactly the CLI's,
// and turns its rows into cases. Errors that are not result mismatches (a policy that does not load, a missing
// resource file) and a suite without any result become failed cases too.
func runKyvernoSuite(dir string) []junit.Case {
	var buf bytes.Buffer
	cmd := kyvernotest.Command()
	cmd.SetArgs([]string{dir, "-o", "json", "--detailed-results", "--remove-color"})
	cmd.SetOut(&buf)
	cmd.SetErr(&buf)
	cmd.SilenceErrors = true
	err := cmd.Execute()
	output := buf.String()
	var cases []junit.Case
	for _, r := range parseKyvernoRows(output) {
		name := r.Policy
		if r.Rule != "" && r.Rule != r.Policy {
			// CEL policies have no rules: kyverno prints no rule, or the policy's name again.
			name += "/" + r.Rule
		}
		c := junit.Case{Name: name + "  " + r.Resource, Classname: dir}
		if r.failed() {
			c.Failure = r.Result + ": " + r.Reason
			c.Details = r.Message
		}
		cases = append(cases, c)
	}
	want, wantErr := expectedRows(dir)
	switch {
	case wantErr != nil:
		cases = append(cases, junit.Case{Name: "kyverno test", Classname: dir, Failure: "reading the suite: " + wantErr.Error()})
	case err != nil && !testsFailed.MatchString(err.Error()):
		cases = append(cases, junit.Case{
			Name: "kyverno test", Classname: dir,
			Failure: "kyverno test failed: " + err.Error(),
			Details: relevantOutput(output),
		})
	case len(cases) == 0:
		cases = append(cases, junit.Case{
			Name: "kyverno test", Classname: dir,
			Failure: "no results: the suite's results matched no policy, rule or resource",
			Details: relevantOutput(output),
		})
	case len(cases) < want:
		cases = append(cases, junit.Case{
			Name: "kyverno test", Classname: dir,
			Failure: fmt.Sprintf("%d results printed, %d declared: a policy failed to apply to the others (run kyverno test %s -v 4 and look for ERR)", len(cases), want, dir),
			Details: relevantOutput(output),
		})
	}
	return cases
}

// relevantOutput drops kyverno's progress lines, which say nothing about what went wrong.
func relevantOutput(output string) string {
	var keep []string
	for _, line := range strings.Split(output, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "Loading ") || strings.HasPrefix(t, "Applying ") || t == "Checking results ..." {
			continue
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}
