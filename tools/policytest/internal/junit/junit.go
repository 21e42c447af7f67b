// Package junit writes test results in the JUnit XML format CI systems display (GitHub, GitLab, Jenkins).
// Counts are derived from the cases when writing, so callers cannot report numbers that disagree with them.
package junit

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
)

// Suite groups the cases of one test unit (a kyverno-test.yaml directory, a chart).
type Suite struct {
	Name  string
	Cases []Case
}

// Case is one result. A case with a non-empty Failure failed.
type Case struct {
	Name      string
	Classname string
	// Failure is the one-line reason shown in CI summaries; Details the full text (diff, message).
	Failure string
	Details string
	// Output is kept for passing cases, e.g. Kyverno's message, so reports show why something passed.
	Output string
}

// Failed reports whether the case failed.
func (c Case) Failed() bool { return c.Failure != "" }

type xmlSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Suites   []xmlSuite `xml:"testsuite"`
}

type xmlSuite struct {
	Name     string    `xml:"name,attr"`
	Tests    int       `xml:"tests,attr"`
	Failures int       `xml:"failures,attr"`
	Errors   int       `xml:"errors,attr"`
	Skipped  int       `xml:"skipped,attr"`
	Cases    []xmlCase `xml:"testcase"`
}

type xmlCase struct {
	Name      string      `xml:"name,attr"`
	Classname string      `xml:"classname,attr"`
	Failure   *xmlFailure `xml:"failure,omitempty"`
	SystemOut string      `xml:"system-out,omitempty"`
}

type xmlFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// Encode writes the suites as one <testsuites> document.
func Encode(w io.Writer, suites []Suite) error {
	doc := xmlSuites{}
	for _, s := range suites {
		xs := xmlSuite{Name: s.Name, Tests: len(s.Cases)}
		for _, c := range s.Cases {
			xc := xmlCase{Name: c.Name, Classname: c.Classname, SystemOut: c.Output}
			if xc.Classname == "" {
				xc.Classname = s.Name
			}
			if c.Failed() {
				xs.Failures++
				xc.Failure = &xmlFailure{Message: c.Failure, Text: c.Details}
			}
			xs.Cases = append(xs.Cases, xc)
		}
		doc.Tests += xs.Tests
		doc.Failures += xs.Failures
		doc.Suites = append(doc.Suites, xs)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteFile encodes the suites to path, replacing it.
func WriteFile(path string, suites []Suite) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := Encode(f, suites); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
