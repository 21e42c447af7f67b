package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/cmdline"
)

func TestGoStyleLongFlagsWithOneDash(t *testing.T) {
	root := newRootCommand()
	got := cmdline.GoStyleFlags(root, []string{"golden", "-update", "-junit=x.xml", "--charts", "c", "-fvi.yaml", "-f", "--", "-update"})
	want := []string{"golden", "--update", "--junit=x.xml", "--charts", "c", "-fvi.yaml", "-f", "--", "-update"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}

	// End to end through cobra: `golden -update` must parse and write the files. From golden's folder: the demo
	// chart's generated policy names the chart by its path from there.
	testsDir := t.TempDir()
	t.Chdir("internal/golden")
	root.SetArgs(cmdline.GoStyleFlags(root, []string{"golden", "-update", "--charts", "testdata/charts", "--tests-dir", testsDir,
		"--policy-chart", "testdata/charts/demo", "--policies-dir", "testdata/policies/demo"}))
	root.SetOut(&bytes.Buffer{})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(testsDir, "demo/golden/default.yaml")); err != nil {
		t.Errorf("golden -update wrote nothing: %v", err)
	}
}
