package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/junit"
)

// report prints one result line, and for a failure its reason and details indented below it, so a CI log reads
// like `go test -v`: one line per result, the explanation next to the failure it belongs to.
func report(out io.Writer, c junit.Case, label string) {
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

type tally struct{ passed, failed int }

func (t *tally) add(c junit.Case) {
	if c.Failed() {
		t.failed++
	} else {
		t.passed++
	}
}

// finish prints the summary line CI greps for, writes the JUnit file if asked, and turns failures (or the absence
// of any result, which means the run checked nothing) into an error.
func (t tally) finish(out io.Writer, junitFile string, suites []junit.Suite) error {
	fmt.Fprintf(out, "%d passed, %d failed\n", t.passed, t.failed)
	if junitFile != "" {
		if err := junit.WriteFile(junitFile, suites); err != nil {
			return err
		}
	}
	switch {
	case t.failed > 0:
		return errReported
	case t.passed == 0:
		return errors.New("no results: nothing was tested")
	}
	return nil
}
