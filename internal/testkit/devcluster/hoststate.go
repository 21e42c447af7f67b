package devcluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// HostState is what a node could change on the host it runs on if it were not isolated, recorded before the node
// starts and after it stops: the check that the node's namespaces kept everything it did to themselves. Nothing
// restores from it.
type HostState struct {
	Sysctls  map[string]string   `json:"sysctls"`
	Iptables map[string][]string `json:"iptables"` // per command (iptables, ip6tables): the normalised save output
	Links    []string            `json:"links"`
	Routes   []string            `json:"routes"`
	Mounts   []string            `json:"mounts"`
	Paths    map[string]bool     `json:"paths"` // fixed paths the node's components use: whether each exists
	Cgroups  []string            `json:"cgroups"`
}

// hostPaths are the places the kubelet, containerd's shims and the CNI plugins use whatever directories they are
// given (privatePaths inside the node).
var hostPaths = []string{
	"/var/log/containers", "/var/log/pods", "/var/lib/kubelet", "/run/containerd", "/var/lib/cni", "/run/netns",
	"/etc/cni",
}

// sysctlRoots are the sysctl trees the kubelet, kube-proxy and the CNI plugins write to.
var sysctlRoots = []string{"kernel", "vm", "net/ipv4", "net/ipv6", "net/bridge", "net/core", "net/netfilter"}

// volatileSysctl matches writable sysctls the kernel changes by itself.
var volatileSysctl = regexp.MustCompile(`^kernel\.(ns_last_pid|random\..*|sched_domain\..*)$|^net\.netfilter\.nf_conntrack_(count|buckets)$`)

// CaptureHost records the host's state as HostState describes it.
func CaptureHost() (*HostState, error) {
	h := &HostState{Sysctls: map[string]string{}, Iptables: map[string][]string{}, Paths: map[string]bool{}}
	for _, root := range sysctlRoots {
		_ = filepath.WalkDir(filepath.Join("/proc/sys", root), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			info, err := d.Info()
			if err != nil || info.Mode().Perm()&0o200 == 0 {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			key := strings.ReplaceAll(strings.TrimPrefix(path, "/proc/sys/"), "/", ".")
			if !volatileSysctl.MatchString(key) {
				h.Sysctls[key] = strings.TrimSpace(string(b))
			}
			return nil
		})
	}
	for _, cmd := range []string{"iptables", "ip6tables"} {
		rules, err := iptablesSave(cmd)
		if err != nil {
			return nil, err
		}
		h.Iptables[cmd] = rules
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	for _, i := range ifaces {
		h.Links = append(h.Links, i.Name)
	}
	for _, family := range []string{"-4", "-6"} {
		out, err := exec.Command("ip", family, "route", "show", "table", "all").Output()
		if err != nil {
			return nil, fmt.Errorf("ip route: %w", err)
		}
		h.Routes = append(h.Routes, nonEmptyLines(out)...)
	}
	if h.Mounts, err = mountPoints(); err != nil {
		return nil, err
	}
	for _, p := range hostPaths {
		_, err := os.Lstat(p)
		h.Paths[p] = err == nil
	}
	h.Cgroups = cgroupDirs()
	sort.Strings(h.Links)
	sort.Strings(h.Routes)
	return h, nil
}

// Diff lists how after differs from h, one line per difference; empty when the host is as h recorded it.
func (h *HostState) Diff(after *HostState) []string {
	var d []string
	for k, v := range h.Sysctls {
		if w, ok := after.Sysctls[k]; ok && w != v {
			d = append(d, fmt.Sprintf("sysctl %s: %s, was %s", k, w, v))
		}
	}
	for cmd, rules := range h.Iptables {
		d = append(d, setDiff(cmd+" rule", rules, after.Iptables[cmd])...)
	}
	d = append(d, setDiff("link", h.Links, after.Links)...)
	d = append(d, setDiff("route", h.Routes, after.Routes)...)
	d = append(d, setDiff("mount", h.Mounts, after.Mounts)...)
	for p, existed := range h.Paths {
		if after.Paths[p] != existed {
			d = append(d, fmt.Sprintf("path %s: exists %t, was %t", p, after.Paths[p], existed))
		}
	}
	// A state saved before only the node's cgroups were recorded lists others too.
	d = append(d, setDiff("cgroup", slices.DeleteFunc(slices.Clone(h.Cgroups), notNodeCgroup), after.Cgroups)...)
	sort.Strings(d)
	return d
}

func setDiff(what string, before, after []string) []string {
	var d []string
	for _, a := range after {
		if !slices.Contains(before, a) {
			d = append(d, fmt.Sprintf("%s added: %s", what, a))
		}
	}
	for _, b := range before {
		if !slices.Contains(after, b) {
			d = append(d, fmt.Sprintf("%s removed: %s", what, b))
		}
	}
	return d
}

// iptablesSave is the save output without comments and counters, and without tables that hold nothing but their
// built-in chains with ACCEPT policies (the nf_tables backend leaves a table behind once it was listed).
func iptablesSave(cmd string) ([]string, error) {
	out, err := exec.Command(cmd + "-save").Output()
	if err != nil {
		return nil, fmt.Errorf("%s-save: %w", cmd, err)
	}
	counters := regexp.MustCompile(` \[\d+:\d+\]$`)
	var lines, table []string
	empty := true
	flush := func() {
		if !empty {
			lines = append(lines, table...)
		}
		table, empty = nil, true
	}
	for _, l := range nonEmptyLines(out) {
		switch {
		case strings.HasPrefix(l, "#"):
			continue
		case strings.HasPrefix(l, "*"):
			flush()
		case strings.HasPrefix(l, ":"):
			l = counters.ReplaceAllString(l, "")
			if f := strings.Fields(l); len(f) < 2 || f[1] != "ACCEPT" {
				empty = false
			}
		case l != "COMMIT":
			empty = false
		}
		table = append(table, l)
	}
	flush()
	return lines, nil
}

func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) > 4 {
			out = append(out, fields[4])
		}
	}
	sort.Strings(out)
	return slices.Compact(out), s.Err()
}

// cgroupDirs lists the cgroups a kubelet makes, kubepods two levels deep under every hierarchy, but for the node's
// own: a killed run leaves that one empty for the next start to remove, and a stop that cannot remove it fails.
// Only those: other programs on the machine create and remove cgroups of their own meanwhile, which are no sign that
// the node left something behind.
func cgroupDirs() []string {
	var out []string
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, h := range hierarchies {
		for _, pattern := range []string{"/*", "/*/*"} {
			dirs, _ := filepath.Glob(h + pattern)
			for _, d := range dirs {
				if fi, err := os.Stat(d); err == nil && fi.IsDir() && nodeCgroup(d) {
					out = append(out, d)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func nodeCgroup(dir string) bool {
	return strings.Contains(dir, "kubepods") && !strings.Contains(dir, "/"+cgroupParent+"/")
}
func notNodeCgroup(dir string) bool { return !nodeCgroup(dir) }

func nonEmptyLines(b []byte) []string {
	var out []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (h *HostState) save(path string) error {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// LoadHostStateOf is the host's state a node recorded before it started from the cluster directory dir.
func LoadHostStateOf(dir string) (*HostState, error) {
	return loadHostState(newNodePaths(dir).hostBefore)
}

func loadHostState(path string) (*HostState, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	h := &HostState{}
	return h, json.Unmarshal(b, h)
}
