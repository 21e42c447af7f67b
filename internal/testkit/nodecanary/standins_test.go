//go:build node

package nodecanary

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// standIns are other software's state on the host, made before the node starts.
type standIns struct {
	iptables []string // the canary lines of iptables-save
	mount    string
	file     string
	cgroup   string
	sleeper  *exec.Cmd
}

const (
	canaryBridge = "vi-canary0"
	canaryVeth   = "vi-canaryv0"
	canaryPeer   = "vi-canaryv1"
	canaryFile   = "/var/lib/kubelet/canary"
	canaryMount  = "/run/netns/canary"
)

// makeStandIns creates the stand-ins; t.Cleanup removes them, and the directories it made for them.
func makeStandIns(t *testing.T) *standIns {
	t.Helper()
	removeLeftStandIns()
	s := &standIns{file: canaryFile, mount: canaryMount}
	for _, dir := range []string{filepath.Dir(canaryFile), filepath.Dir(canaryMount)} {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run(t, "iptables", "-N", "KUBE-CANARY")
	t.Cleanup(func() { _ = exec.Command("iptables", "-X", "KUBE-CANARY").Run() })
	run(t, "iptables", "-A", "KUBE-CANARY", "-j", "RETURN")
	t.Cleanup(func() { _ = exec.Command("iptables", "-F", "KUBE-CANARY").Run() })
	run(t, "iptables", "-I", "FORWARD", "-j", "KUBE-CANARY")
	t.Cleanup(func() { _ = exec.Command("iptables", "-D", "FORWARD", "-j", "KUBE-CANARY").Run() })
	run(t, "iptables", "-N", "CNI-CANARY")
	t.Cleanup(func() { _ = exec.Command("iptables", "-X", "CNI-CANARY").Run() })
	run(t, "ip", "link", "add", canaryBridge, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "delete", canaryBridge).Run() })
	run(t, "ip", "link", "add", canaryVeth, "type", "veth", "peer", "name", canaryPeer)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "delete", canaryVeth).Run() })

	if err := os.WriteFile(canaryFile, []byte("another kubelet's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(canaryFile) })
	if err := os.WriteFile(canaryMount, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(canaryMount) })
	run(t, "mount", "--bind", "/proc/self/ns/net", canaryMount)
	t.Cleanup(func() { _ = syscall.Unmount(canaryMount, syscall.MNT_DETACH) })

	s.cgroup = filepath.Join(pidsHierarchy(t), "kubepods-canary")
	if err := os.Mkdir(s.cgroup, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Rmdir(s.cgroup) })
	s.sleeper = exec.Command("sleep", "3600")
	if err := s.sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.sleeper.Process.Kill(); _, _ = s.sleeper.Process.Wait() })
	if err := os.WriteFile(filepath.Join(s.cgroup, "cgroup.procs"), []byte(strconv.Itoa(s.sleeper.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.iptables = canaryRules(t)
	if len(s.iptables) != 4 {
		t.Fatalf("iptables-save shows %d canary lines, want 4: %q", len(s.iptables), s.iptables)
	}
	return s
}

// removeLeftStandIns removes what a canary run that was killed left (its cleanups never ran), ignoring what is not
// there.
func removeLeftStandIns() {
	for _, args := range [][]string{
		{"iptables", "-D", "FORWARD", "-j", "KUBE-CANARY"}, {"iptables", "-F", "KUBE-CANARY"}, {"iptables", "-X", "KUBE-CANARY"},
		{"iptables", "-X", "CNI-CANARY"}, {"ip", "link", "delete", canaryBridge}, {"ip", "link", "delete", canaryVeth},
	} {
		_ = exec.Command(args[0], args[1:]...).Run()
	}
	_ = syscall.Unmount(canaryMount, syscall.MNT_DETACH)
	_ = os.Remove(canaryMount)
	_ = os.Remove(canaryFile)
	for _, h := range []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup"} {
		cg := filepath.Join(h, "kubepods-canary")
		if b, err := os.ReadFile(filepath.Join(cg, "cgroup.procs")); err == nil {
			for _, pid := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(pid); err == nil {
					_ = syscall.Kill(n, syscall.SIGKILL)
				}
			}
			time.Sleep(100 * time.Millisecond)
			_ = syscall.Rmdir(cg)
		}
	}
}

// check fails the test for every stand-in that is not as it was made.
func (s *standIns) check(t *testing.T, after string) {
	t.Helper()
	if got := canaryRules(t); !slices.Equal(got, s.iptables) {
		t.Errorf("after %s: the canary iptables lines are %q, were %q", after, got, s.iptables)
	}
	for _, link := range []string{canaryBridge, canaryVeth, canaryPeer} {
		if _, err := os.Stat(filepath.Join("/sys/class/net", link)); err != nil {
			t.Errorf("after %s: link %s: %v", after, link, err)
		}
	}
	if b, err := os.ReadFile(s.file); err != nil || string(b) != "another kubelet's\n" {
		t.Errorf("after %s: %s holds %q (%v)", after, s.file, b, err)
	}
	if !mounted(t, s.mount) {
		t.Errorf("after %s: %s is no longer a mount point", after, s.mount)
	}
	pid := s.sleeper.Process.Pid
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("after %s: the process in %s is gone: %v", after, s.cgroup, err)
	}
	if b, err := os.ReadFile(filepath.Join(s.cgroup, "cgroup.procs")); err != nil || !slices.Contains(strings.Fields(string(b)), strconv.Itoa(pid)) {
		t.Errorf("after %s: cgroup %s holds %q (%v), want pid %d", after, s.cgroup, b, err, pid)
	}
}

func canaryRules(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("iptables-save", "-t", "filter").Output()
	if err != nil {
		t.Fatalf("iptables-save: %v", err)
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "CANARY") {
			lines = append(lines, strings.Fields(l)[0]+" "+strings.Join(strings.Fields(l)[1:], " "))
		}
	}
	// Chain lines carry packet counters that change: keep the chain's name and policy.
	for i, l := range lines {
		if strings.HasPrefix(l, ":") {
			lines[i] = strings.Join(strings.Fields(l)[:2], " ")
		}
	}
	return lines
}

func mounted(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) > 4 && fields[4] == path {
			return true
		}
	}
	return false
}

// pidsHierarchy is where a kubelet's cgroup with a process goes: cgroup v1's pids hierarchy, or cgroup v2's root.
func pidsHierarchy(t *testing.T) string {
	t.Helper()
	for _, h := range []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup"} {
		if _, err := os.Stat(filepath.Join(h, "cgroup.procs")); err == nil {
			return h
		}
	}
	t.Fatal("no cgroup hierarchy with cgroup.procs under /sys/fs/cgroup")
	return ""
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// sysctl reads or, with a value, writes a sysctl of the host.
func sysctl(t *testing.T, key string, value ...string) string {
	t.Helper()
	path := filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
	if len(value) > 0 {
		if err := os.WriteFile(path, []byte(value[0]), 0o644); err != nil {
			t.Fatalf("setting %s: %v", key, err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
