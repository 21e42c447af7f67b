// Package renderfile compares the operator's rendered configuration files with the golden copies its unit tests keep
// in testdata.
package renderfile

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// Golden fails t unless got is testdata/<name>.golden of the package under test; with -update it writes that file.
func Golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update in its package writes it)", err)
	}
	if string(want) != got {
		t.Fatalf("render differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}
