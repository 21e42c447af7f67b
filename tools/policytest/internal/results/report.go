// Package results prints what the checking verbs (golden, kyverno, compare) find, one line per result as `go test
// -v` does, and sums it up for CI: a closing count, an optional JUnit file and the exit status.
package results

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/junit"
)

// ErrReported marks a failure whose details were already printed; main only sets the exit code for it.
var ErrReported = errors.New("failed")

// Report prints one result line, and for a failure its reason and details indented below it, so a CI log reads
// like `go test -v`: one line per result, the explanation next to the failure it belongs to.
func Report(out io.Writer, c junit.Case, label string) {
	status := "PASS"
	if c.Failed() {
		status = "FAIL"
	}
	fmt.Fprintf(out, "%s  %s\n", status, label)
	if c.Failed() {
		fmt.Fprint(out, indent(c.Failure))
		if c.Details != "" {
			fmt.Fprint(out, indent(c.Details))
		}
	} else if c.Output != "" {
		fmt.Fprint(out, indent(c.Output))
	}
}

func indent(text string) string {
	text = strings.TrimRight(text, "\n")
	return "      " + strings.ReplaceAll(text, "\n", "\n      ") + "\n"
}

// Tally counts the results a verb reported.
type Tally struct{ passed, failed int }

func (t *Tally) Add(c junit.Case) {
	if c.Failed() {
		t.failed++
	} else {
		t.passed++
	}
}

// Finish prints the summary line CI greps for, writes the JUnit file if asked, and turns failures (or the absence
// of any result, which means the run checked nothing) into an error.
func (t Tally) Finish(out io.Writer, junitFile string, suites []junit.Suite) error {
	fmt.Fprintf(out, "%d passed, %d failed\n", t.passed, t.failed)
	if junitFile != "" {
		if err := junit.WriteFile(junitFile, suites); err != nil {
			return err
		}
	}
	switch {
	case t.failed > 0:
		return ErrReported
	case t.passed == 0:
		return errors.New("no results: nothing was tested")
	}
	return nil
}
