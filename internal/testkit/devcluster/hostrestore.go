package devcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// restoreHost undoes what a node changed since before was captured, touching only what the node's components make
// (mounts under dataDir and the fixed paths, its links and the veths on them, the rules and chains added since, the
// sysctls, the kubepods cgroups, the fixed paths it created), and reports what still differs.
func restoreHost(before *HostState, dataDir string, links []string) error {
	now, err := CaptureHost()
	if err != nil {
		return err
	}
	var errs []error
	errs = append(errs, unmountNew(before, now, dataDir)...)
	// The Pods' veths left on the node's bridges first (only those: another program's veths are not the node's),
	// then the bridges.
	var remove []string
	for _, l := range now.Links {
		if master, err := os.Readlink(filepath.Join("/sys/class/net", l, "master")); err == nil &&
			!slices.Contains(before.Links, l) && slices.Contains(links, filepath.Base(master)) {
			remove = append(remove, l)
		}
	}
	for _, l := range links {
		if slices.Contains(now.Links, l) && !slices.Contains(before.Links, l) {
			remove = append(remove, l)
		}
	}
	for _, l := range remove {
		errs = append(errs, deleteLink(l))
	}
	for cmd, rules := range now.Iptables {
		if err := removeRules(cmd, before.Iptables[cmd], rules); err != nil {
			errs = append(errs, err)
		}
	}
	for k, v := range before.Sysctls {
		if w, ok := now.Sysctls[k]; ok && w != v {
			if err := os.WriteFile(filepath.Join("/proc/sys", strings.ReplaceAll(k, ".", "/")), []byte(v), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("restoring sysctl %s: %w", k, err))
			}
		}
	}
	for _, cg := range now.Cgroups {
		if !slices.Contains(before.Cgroups, cg) {
			errs = append(errs, removeCgroup(cg))
		}
	}
	for p, existed := range before.Paths {
		if !existed {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	after, err := CaptureHost()
	if err != nil {
		return err
	}
	if d := before.Diff(after); len(d) > 0 {
		return fmt.Errorf("devcluster: the host is not as the node found it:\n  %s", strings.Join(d, "\n  "))
	}
	return nil
}

// deleteLink deletes a link the node left. A Pod's veth goes with its network namespace, which the kernel frees
// asynchronously once the Pod's processes are killed, so a veth listed a moment ago may be gone already: that is the
// outcome wanted, not a failure.
func deleteLink(l string) error {
	out, err := exec.Command("ip", "link", "delete", l).CombinedOutput()
	if err == nil {
		return nil
	}
	if _, statErr := os.Stat(filepath.Join("/sys/class/net", l)); errors.Is(statErr, os.ErrNotExist) {
		return nil
	}
	return fmt.Errorf("ip link delete %s: %w: %s", l, err, out)
}

// unmountNew unmounts, deepest first, the mounts made since before under the node's data directory and the fixed
// paths (Pod volumes, containers' root filesystems, network namespaces).
func unmountNew(before, now *HostState, dataDir string) []error {
	prefixes := append([]string{dataDir}, hostPaths...)
	var mine []string
	for _, m := range now.Mounts {
		if slices.Contains(before.Mounts, m) {
			continue
		}
		for _, p := range prefixes {
			if m == p || strings.HasPrefix(m, p+"/") {
				mine = append(mine, m)
				break
			}
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(mine)))
	var errs []error
	for _, m := range mine {
		if err := unix.Unmount(m, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", m, err))
		}
	}
	return errs
}

// nodeChain matches the chains the node's components create: kube-proxy's and the kubelet's (KUBE-), the CNI
// plugins' (CNI-) and the node's own (DEVCLUSTER-).
var nodeChain = regexp.MustCompile(`^(KUBE|CNI|DEVCLUSTER)-`)

// removeRules deletes, table by table in one `iptables-restore --noflush`, the node's chains that are in now and not
// in before, and the new rules that jump to them; nothing else's rules are touched (a rule someone else added
// meanwhile is left, and the comparison that follows reports it).
func removeRules(cmd string, before, now []string) error {
	script := nodeRuleRemoval(before, now)
	if script == "" {
		return nil
	}
	c := exec.Command(cmd+"-restore", "--noflush")
	c.Stdin = strings.NewReader(script)
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("%s-restore removing the node's rules: %w: %s", cmd, err, out)
	}
	return nil
}

// nodeRuleRemoval is the iptables-restore input removeRules runs, "" when there is nothing to remove.
func nodeRuleRemoval(before, now []string) string {
	var script []string
	var table string
	var newChains, deletes []string
	flush := func() {
		if table == "" || len(newChains) == 0 && len(deletes) == 0 {
			return
		}
		script = append(script, table)
		script = append(script, deletes...)
		for _, c := range newChains {
			script = append(script, "-F "+c)
		}
		for _, c := range newChains {
			script = append(script, "-X "+c)
		}
		script = append(script, "COMMIT")
	}
	seen := map[string]bool{}
	tableOf := ""
	for _, l := range before {
		if strings.HasPrefix(l, "*") {
			tableOf = l
		}
		seen[tableOf+" "+l] = true
	}
	for _, l := range now {
		switch {
		case strings.HasPrefix(l, "*"):
			flush()
			table, newChains, deletes = l, nil, nil
		case seen[table+" "+l]:
		case strings.HasPrefix(l, ":"):
			if f := strings.Fields(l[1:]); len(f) > 1 && f[1] == "-" && nodeChain.MatchString(f[0]) {
				newChains = append(newChains, f[0])
			}
		case strings.HasPrefix(l, "-A "):
			f := strings.Fields(l)
			if len(f) > 1 && !nodeChain.MatchString(f[1]) && jumpsToNodeChain(f) {
				deletes = append(deletes, "-D "+strings.TrimPrefix(l, "-A "))
			}
		}
	}
	flush()
	if len(script) == 0 {
		return ""
	}
	return strings.Join(script, "\n") + "\n"
}

func jumpsToNodeChain(fields []string) bool {
	for i, f := range fields {
		if (f == "-j" || f == "-g") && i+1 < len(fields) && nodeChain.MatchString(fields[i+1]) {
			return true
		}
	}
	return false
}

// removeCgroup removes a cgroup and its children, deepest first (a cgroup with children cannot be removed).
func removeCgroup(dir string) error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	slices.Reverse(dirs)
	var errs []error
	for _, d := range dirs {
		if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}
