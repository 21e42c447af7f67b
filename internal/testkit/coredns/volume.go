package coredns

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Volume is a directory updated the way the kubelet updates a ConfigMap volume: every key is a symlink through
// "..data" to a timestamped directory, and an update swaps "..data" in one rename, so a reader sees either the old
// set of files or the new one, never a mix, and a removed key disappears.
type Volume struct {
	Dir string
}

const dataLink = "..data"

// Write makes files the volume's whole content.
func (v *Volume) Write(files map[string]string) error {
	if err := os.MkdirAll(v.Dir, 0o755); err != nil {
		return err
	}
	old, _ := os.Readlink(filepath.Join(v.Dir, dataLink))
	stamp := "..stamp_" + strconv.FormatInt(time.Now().UnixNano(), 10)
	if err := os.Mkdir(filepath.Join(v.Dir, stamp), 0o755); err != nil {
		return err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(v.Dir, stamp, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	tmp := filepath.Join(v.Dir, dataLink+"_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(stamp, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(v.Dir, dataLink)); err != nil {
		return fmt.Errorf("swapping %s: %w", dataLink, err)
	}
	for name := range files {
		link := filepath.Join(v.Dir, name)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join(dataLink, name), link); err != nil {
				return err
			}
		}
	}
	entries, err := os.ReadDir(v.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, kept := files[e.Name()]; !kept && e.Type()&os.ModeSymlink != 0 && e.Name() != dataLink {
			_ = os.Remove(filepath.Join(v.Dir, e.Name()))
		}
	}
	if old != "" {
		return os.RemoveAll(filepath.Join(v.Dir, old))
	}
	return nil
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
