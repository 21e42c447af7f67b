package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestBinaryKind(t *testing.T) {
	tar := make([]byte, 512)
	copy(tar[257:], "ustar")
	for name, tc := range map[string]struct {
		head []byte
		want string
	}{
		"elf":       {[]byte("\x7fELF\x02\x01\x01"), "an ELF binary"},
		"mach-o":    {[]byte{0xcf, 0xfa, 0xed, 0xfe, 7}, "a Mach-O binary"},
		"pe":        {[]byte("MZ\x90\x00"), "a PE (Windows) binary"},
		"gzip":      {[]byte{0x1f, 0x8b, 8}, "a gzip archive"},
		"zip":       {[]byte("PK\x03\x04rest"), "a zip archive"},
		"tar":       {tar, "a tar archive"},
		"go source": {[]byte("package main\n"), ""},
		"yaml":      {[]byte("apiVersion: v1\n"), ""},
		"empty":     {nil, ""},
	} {
		if got := binaryKind(tc.head); got != tc.want {
			t.Errorf("%s: binaryKind = %q, want %q", name, got, tc.want)
		}
	}
}

// TestCheckRefusesABinaryAndALargeFileUnlessAllowed runs the check on a scratch repository as `make lint` runs it
// on this one.
func TestCheckRefusesABinaryAndALargeFileUnlessAllowed(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name string, data []byte) {
		t.Helper()
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("main.go", []byte("package main\n"))
	write("bench", []byte("\x7fELF\x02\x01\x01\x00"))
	write("big.json", []byte(strings.Repeat("x", maxSize+1)))
	write("untracked-binary", []byte("\x7fELF"))
	git("add", "main.go", "bench", "big.json")

	problems, err := check(root)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(problems, "\n")
	if len(problems) != 2 || !strings.Contains(got, "bench: an ELF binary") || !strings.Contains(got, "big.json: 1048577 bytes") {
		t.Fatalf("problems = %q, want the binary and the large file only", problems)
	}

	write(allowList, []byte("# reason\nbig.json  # a fixture that must be large\n"))
	git("add", allowList)
	if problems, err = check(root); err != nil || len(problems) != 1 || !strings.HasPrefix(problems[0], "bench:") {
		t.Fatalf("with big.json allowed: problems = %q, err = %v; want only bench", problems, err)
	}
}
