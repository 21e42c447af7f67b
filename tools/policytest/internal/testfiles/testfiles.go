// Package testfiles holds what the tests of policytest's verbs share: files copied, changed and read back, and the
// paths of the repository's own chart and fixtures. Only tests import it.
package testfiles

import (
	"bytes"
	"encoding/xml"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/cmdline"
)

// Every verb's tests import this package, so here Kyverno's libraries are silenced for all of them, as main does.
func init() { cmdline.SilenceKyvernoLogs() }

// RepoRoot is the repository's root from the folder of a verb's package (tools/policytest/internal/<verb>), where
// its tests run.
const RepoRoot = "../../../.."

// RealChart is the virtual-ingress chart. The tests of sync, preview and compare run it, not a test chart: those
// verbs exist to show what its policies do.
const RealChart = RepoRoot + "/charts/virtual-ingress"

// CopyDir copies a testdata tree to a temporary directory the test may change.
func CopyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// ReplaceInFile changes exactly one occurrence of old, failing the test if there is not exactly one.
func ReplaceInFile(t *testing.T, path, old, replacement string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), old); n != 1 {
		t.Fatalf("%s contains %q %d times, want once", path, old, n)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, replacement, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func WriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ReadFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func AssertContains(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q; output:\n%s", w, got)
		}
	}
}

// JUnitCounts reads back a JUnit file: total tests and failures, and per suite name the same pair.
func JUnitCounts(t *testing.T, path string) (tests, failures int, suites map[string][2]int) {
	t.Helper()
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.NewDecoder(bytes.NewReader([]byte(ReadFile(t, path)))).Decode(&doc); err != nil {
		t.Fatalf("%s is not XML: %v", path, err)
	}
	suites = map[string][2]int{}
	for _, s := range doc.Suites {
		failed := 0
		for _, c := range s.Cases {
			if c.Failure != nil {
				failed++
			}
		}
		suites[s.Name] = [2]int{len(s.Cases), failed}
	}
	return doc.Tests, doc.Failures, suites
}
