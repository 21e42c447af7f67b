// Command treecheck refuses committed build outputs: every file git tracks must be source, so a binary (ELF, Mach-O,
// PE, an archive) or any file larger than maxSize fails `make lint` unless allowed.txt beside this file lists its
// path.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// maxSize is the largest file the tree may hold without an allow-list entry.
const maxSize = 1 << 20

// allowList names the files exempt from the check, one repository-relative path a line; # starts a comment.
const allowList = "tools/treecheck/allowed.txt"

func main() {
	root, err := gitRoot()
	if err == nil {
		var problems []string
		problems, err = check(root)
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "treecheck:", p)
		}
		if err == nil && len(problems) > 0 {
			err = fmt.Errorf("%d file(s) must not be committed (build outputs belong in bin/ or _output/; list a deliberate exception in %s)", len(problems), allowList)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "treecheck:", err)
		os.Exit(1)
	}
}

func gitRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// check returns one line for each tracked file that is a binary or too large and not allowed.
func check(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	allowed, err := readAllowList(filepath.Join(root, allowList))
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" || allowed[name] {
			continue
		}
		why, err := inspect(filepath.Join(root, name))
		if err != nil {
			return nil, err
		}
		if why != "" {
			problems = append(problems, name+": "+why)
		}
	}
	return problems, nil
}

func readAllowList(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	allowed := map[string]bool{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line, _, _ := strings.Cut(s.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			allowed[line] = true
		}
	}
	return allowed, s.Err()
}

// inspect says why a file must not be committed, or "" when it may. A tracked file deleted in the work tree is
// not there to look at: the commit that deletes it is fine.
func inspect(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	if info.IsDir() { // a submodule
		return "", nil
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	if kind := binaryKind(head[:n]); kind != "" {
		return kind, nil
	}
	if info.Size() > maxSize {
		return fmt.Sprintf("%d bytes, over the %d-byte limit", info.Size(), maxSize), nil
	}
	return "", nil
}

// magics are the leading bytes of executables and archives.
var magics = []struct {
	prefix []byte
	kind   string
}{
	{[]byte("\x7fELF"), "an ELF binary"},
	{[]byte{0xfe, 0xed, 0xfa, 0xce}, "a Mach-O binary"},
	{[]byte{0xfe, 0xed, 0xfa, 0xcf}, "a Mach-O binary"},
	{[]byte{0xce, 0xfa, 0xed, 0xfe}, "a Mach-O binary"},
	{[]byte{0xcf, 0xfa, 0xed, 0xfe}, "a Mach-O binary"},
	{[]byte{0xca, 0xfe, 0xba, 0xbe}, "a Mach-O universal binary or Java class"},
	{[]byte("MZ"), "a PE (Windows) binary"},
	{[]byte("!<arch>\n"), "an ar archive"},
	{[]byte("PK\x03\x04"), "a zip archive"},
	{[]byte{0x1f, 0x8b}, "a gzip archive"},
	{[]byte("BZh"), "a bzip2 archive"},
	{[]byte{0xfd, '7', 'z', 'X', 'Z', 0x00}, "an xz archive"},
	{[]byte{0x28, 0xb5, 0x2f, 0xfd}, "a zstd archive"},
	{[]byte{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c}, "a 7z archive"},
	{[]byte("\x00asm"), "a WebAssembly binary"},
}

// binaryKind names the kind of executable or archive head starts, or returns "".
func binaryKind(head []byte) string {
	for _, m := range magics {
		if bytes.HasPrefix(head, m.prefix) {
			return m.kind
		}
	}
	// A tar archive says so at offset 257.
	if len(head) >= 262 && bytes.Equal(head[257:262], []byte("ustar")) {
		return "a tar archive"
	}
	return ""
}
