package junit

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parsed mirrors the JUnit schema CI tools read, independently of the writer's own types.
type parsed struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestWriteFileParsesWithCounts(t *testing.T) {
	suites := []Suite{
		{Name: "policies/virtual-ingress/resolve", Cases: []Case{
			{Name: "virtual-ingress-resolve/resolve-backends  tenant-root/coder", Output: "ok"},
			{Name: "virtual-ingress-resolve/resolve-backends  tenant-root/web", Failure: `Want pass, got fail <&"]]>`,
				Details: "--- expected\n+++ actual\n\x1b[31m-a\x1b[0m\n+b & <c>\n"},
			{Name: "third", Failure: "Fail: Not found"},
		}},
		{Name: "golden", Cases: []Case{{Name: "virtual-ingress/default", Classname: "golden.virtual-ingress"}}},
	}
	path := filepath.Join(t.TempDir(), "report.xml")
	if err := WriteFile(path, suites); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte(xml.Header)) {
		t.Error("no XML declaration")
	}
	var got parsed
	if err := xml.Unmarshal(data, &got); err != nil {
		t.Fatalf("output is not XML: %v\n%s", err, data)
	}
	if got.Tests != 4 || got.Failures != 2 {
		t.Errorf("testsuites tests=%d failures=%d, want 4 and 2", got.Tests, got.Failures)
	}
	if len(got.Suites) != 2 {
		t.Fatalf("got %d suites", len(got.Suites))
	}
	s := got.Suites[0]
	if s.Name != "policies/virtual-ingress/resolve" || s.Tests != 3 || s.Failures != 2 {
		t.Errorf("suite %q tests=%d failures=%d", s.Name, s.Tests, s.Failures)
	}
	if s.Cases[0].Failure != nil || s.Cases[0].SystemOut != "ok" {
		t.Errorf("passing case: %+v", s.Cases[0])
	}
	if s.Cases[0].Classname != s.Name {
		t.Errorf("classname %q, want the suite name when unset", s.Cases[0].Classname)
	}
	f := s.Cases[1].Failure
	if f == nil || f.Message != `Want pass, got fail <&"]]>` || !strings.Contains(f.Text, "+b & <c>") {
		t.Errorf("failure not preserved: %+v", f)
	}
	if got.Suites[1].Cases[0].Classname != "golden.virtual-ingress" || got.Suites[1].Failures != 0 {
		t.Errorf("second suite: %+v", got.Suites[1])
	}
}

func TestEncodeEmptyIsValid(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, nil); err != nil {
		t.Fatal(err)
	}
	var got parsed
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil || got.Tests != 0 {
		t.Fatalf("empty report: %v %+v", err, got)
	}
}
