package filesync

import (
	"os"
	"path/filepath"
	"testing"
)

// The directory ends up holding exactly the data: new keys written, changed ones replaced, removed ones deleted,
// unchanged ones untouched, and the reader's own hidden files left alone.
func TestWriteMakesTheDirectoryTheData(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, map[string]string{"Corefile": "a", "vlan-x.zone": "z1", "old.zone": "o"}); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(filepath.Join(dir, "Corefile"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, map[string]string{"Corefile": "a", "vlan-x.zone": "z2"}); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(filepath.Join(dir, "Corefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Error("an unchanged file was rewritten: CoreDNS would see a new file for nothing")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = string(b)
	}
	want := map[string]string{"Corefile": "a", "vlan-x.zone": "z2", ".keep": "x"}
	if len(got) != len(want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("files %v, want %v", got, want)
		}
	}
}

// A key that is no plain file name is refused: data never writes outside the directory.
func TestWriteRefusesKeysThatAreNoFileNames(t *testing.T) {
	for _, key := range []string{"../escape", "a/b", ".hidden", ""} {
		if err := Write(t.TempDir(), map[string]string{key: "x"}); err == nil {
			t.Errorf("key %q accepted", key)
		}
	}
}
