package coredns

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/filesync"
)

// Volume is a directory updated the way the kubelet updates a ConfigMap volume: every key is a symlink through
// "..data" to a timestamped directory, and an update swaps "..data" in one rename, so a reader sees either the old
// set of files or the new one, never a mix, and a removed key disappears.
type Volume struct {
	Dir string
}

const dataLink = filesync.DataLink

// Write makes files the volume's whole content (as the sidecar does, in the kubelet's layout).
func (v *Volume) Write(files map[string]string) error { return filesync.Write(v.Dir, files) }

// Stage writes files beside the served set; they replace it, at once, at the returned Commit.
func (v *Volume) Stage(files map[string]string) (*filesync.Staged, error) {
	return filesync.Stage(v.Dir, files)
}

// Dump is every file of the volume, each under a header with its name.
func (v *Volume) Dump() string {
	names, err := filepath.Glob(filepath.Join(v.Dir, dataLink, "*"))
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			fmt.Fprintf(&b, "==> %s: %v\n", filepath.Base(n), err)
			continue
		}
		fmt.Fprintf(&b, "==> %s\n%s\n", filepath.Base(n), data)
	}
	return b.String()
}
