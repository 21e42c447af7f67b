package filesync

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The directory ends up holding exactly the data, each key a link through "..data" to one snapshot: new keys written,
// changed ones replaced, removed ones deleted, the previous snapshot gone, and the reader's own hidden files left alone.
func TestWriteMakesTheDirectoryTheData(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, map[string]string{"Corefile": "a", "vlan-x.zone": "z1", "old.zone": "o"}); err != nil {
		t.Fatal(err)
	}
	first, err := os.Readlink(filepath.Join(dir, DataLink))
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, map[string]string{"Corefile": "a", "vlan-x.zone": "z2"}); err != nil {
		t.Fatal(err)
	}
	second, err := os.Readlink(filepath.Join(dir, DataLink))
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatalf("%s still names %s: the new set is not one snapshot", DataLink, first)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Errorf("the previous snapshot %s is left behind (%v)", first, err)
	}
	got := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == DataLink || e.Name() == second {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = string(b)
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); e.Name() != ".keep" && (err != nil || target != filepath.Join(DataLink, e.Name())) {
			t.Errorf("%s is no link through %s (%q, %v)", e.Name(), DataLink, target, err)
		}
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
	// What a reader that resolves the link first sees is the whole set, written together.
	snap, err := os.ReadDir(filepath.Join(dir, second))
	if err != nil || len(snap) != 2 {
		t.Errorf("snapshot %s holds %v (%v), want the two files", second, snap, err)
	}
}

// A file whose content did not change is the previous snapshot's file, linked rather than written again; a changed one
// is a new file, and the previous snapshot's removal leaves the shared file whole.
func TestWriteLinksUnchangedFiles(t *testing.T) {
	dir := t.TempDir()
	inode := func(key string) uint64 {
		t.Helper()
		fi, err := os.Stat(filepath.Join(dir, key))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	if err := Write(dir, map[string]string{"same.zone": "s", "changed.zone": "c1"}); err != nil {
		t.Fatal(err)
	}
	same, changed := inode("same.zone"), inode("changed.zone")
	if err := Write(dir, map[string]string{"same.zone": "s", "changed.zone": "c2"}); err != nil {
		t.Fatal(err)
	}
	if inode("same.zone") != same {
		t.Error("an unchanged file was written again")
	}
	if inode("changed.zone") == changed {
		t.Error("a changed file kept its inode: written in place, a reader could see it half-written")
	}
	for key, want := range map[string]string{"same.zone": "s", "changed.zone": "c2"} {
		if b, err := os.ReadFile(filepath.Join(dir, key)); err != nil || string(b) != want {
			t.Errorf("%s holds %q (%v), want %q", key, b, err, want)
		}
	}
}

// A key that is no plain file name is refused before anything is written: data never writes outside the directory.
func TestWriteRefusesKeysThatAreNoFileNames(t *testing.T) {
	for _, key := range []string{"../escape", "a/b", ".hidden", "..data", ""} {
		dir := t.TempDir()
		if err := Write(dir, map[string]string{key: "x", "Corefile": "a"}); err == nil {
			t.Errorf("key %q accepted", key)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("key %q: the refused write left %v", key, entries)
		}
	}
}
