package devcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/netns"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
)

// The node runs in namespaces of its own: a network namespace (its links, routes, iptables rules and network
// sysctls), a mount namespace in which the fixed paths its components use are private, and a PID namespace that
// takes every process of the node (containerd's shims and the containers too) down with it. Its processes live in
// one cgroup of its own in every hierarchy. The host keeps one end of a veth pair, with the routes to the Pods and
// Services, all of which go when the namespaces go. Nothing else on the host is touched: stopping the node is
// stopping its processes and removing its namespaces, its cgroup and its data directory.

// cgroupParent is the node's cgroup under the root of every hierarchy: the kubelet's cgroup root (so its kubepods
// are below it) and where every node process runs. One node per machine, so a fixed name.
const cgroupParent = "devcluster-node"

// privatePaths are the fixed paths the node's components use whatever they are told (shim sockets under
// /run/containerd, Pod network namespaces under /run/netns, the kubelet's device plugins, Pod log links, CNI caches):
// inside the node's mount namespace each is an empty file system of its own.
var privatePaths = []string{
	"/var/lib/kubelet", "/var/lib/containerd", "/var/lib/cni", "/run/containerd", "/run/netns", "/etc/cni",
	"/var/log/pods", "/var/log/containers",
}

// kernelTunables are the kernel-wide sysctls the kubelet sets (container_manager_linux.go): inside the node's mount
// namespace each is a file of the node's own, so the kubelet's writes never reach the host's kernel.
var kernelTunables = []string{
	"kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
	"vm/overcommit_memory", "vm/panic_on_oom",
}

// isolateNode makes the node's namespaces and its link to the host.
func (c *Cluster) isolateNode(ctx context.Context) error {
	n := c.node
	ns, err := netns.New(netns.Options{Mount: true, PID: true, Detach: c.opts.Detach, Wrap: cgroupWrap()})
	if err != nil {
		return err
	}
	n.ns = ns
	if err := privatize(ctx, ns, n.paths.private); err != nil {
		return err
	}
	if err := privateTunables(ctx, ns, n.paths.tunables); err != nil {
		return err
	}
	return linkNode(ctx, ns)
}

// privatize gives every private path an empty file system inside ns. A path the host lacks cannot be a mount point
// without being created on the host, so its nearest existing parent is covered first by an overlay whose writes go to
// scratch: the host's files show through, and what the node creates there stays in scratch.
func privatize(ctx context.Context, ns *netns.Namespace, scratch string) error {
	overlaid := map[string]bool{}
	for _, p := range privatePaths {
		if _, err := os.Lstat(p); err != nil {
			parent := filepath.Dir(p)
			for {
				if _, err := os.Lstat(parent); err == nil {
					break
				}
				parent = filepath.Dir(parent)
			}
			if parent == "/" {
				return fmt.Errorf("devcluster: cannot make %s private to the node: no parent of it but / exists", p)
			}
			if !overlaid[parent] {
				dir := filepath.Join(scratch, strings.ReplaceAll(strings.Trim(parent, "/"), "/", "_"))
				upper, work := filepath.Join(dir, "upper"), filepath.Join(dir, "work")
				if err := errors.Join(os.MkdirAll(upper, 0o755), os.MkdirAll(work, 0o755)); err != nil {
					return err
				}
				opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", parent, upper, work)
				if err := ns.Run(ctx, "mount", "-t", "overlay", "-o", opts, "devcluster-node", parent); err != nil {
					return err
				}
				overlaid[parent] = true
			}
			if err := ns.Run(ctx, "mkdir", "-p", p); err != nil {
				return err
			}
		}
		if err := ns.Run(ctx, "mount", "-t", "tmpfs", "-o", "mode=0755", "devcluster-node", p); err != nil {
			return err
		}
	}
	return nil
}

// privateTunables covers each kernel tunable with a file holding the host's value.
func privateTunables(ctx context.Context, ns *netns.Namespace, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, t := range kernelTunables {
		v, err := os.ReadFile(filepath.Join("/proc/sys", t))
		if err != nil {
			return err
		}
		f := filepath.Join(dir, strings.ReplaceAll(t, "/", "."))
		if err := os.WriteFile(f, v, 0o644); err != nil {
			return err
		}
		if err := ns.Run(ctx, "mount", "--bind", f, filepath.Join("/proc/sys", t)); err != nil {
			return err
		}
	}
	return nil
}

// linkNode joins the node to the host by a veth pair, HostIP on the host's end and NodeIP on the node's, and routes
// the Pods' and Services' addresses to the node; the host end and its routes go with the namespace.
func linkNode(ctx context.Context, ns *netns.Namespace) error {
	pid := strconv.Itoa(ns.PID())
	host := func(args ...string) error {
		if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	steps := []func() error{
		func() error {
			return host("link", "add", nodeLink, "type", "veth", "peer", "name", nodeIface, "netns", pid)
		},
		func() error { return host("addr", "add", HostIP+nodeLinkPrefix, "dev", nodeLink) },
		func() error { return host("link", "set", nodeLink, "up") },
		func() error { return ns.Run(ctx, "ip", "addr", "add", NodeIP+nodeLinkPrefix, "dev", nodeIface) },
		func() error { return ns.Run(ctx, "ip", "link", "set", nodeIface, "up") },
		func() error { return ns.Run(ctx, "ip", "link", "set", "lo", "up") },
		func() error { return host("route", "add", podCIDR, "via", NodeIP, "dev", nodeLink) },
		func() error { return host("route", "add", serviceCIDR, "via", NodeIP, "dev", nodeLink) },
		// The node's own processes (hostNetwork Pods among them) need a route to a Service's address before
		// kube-proxy's OUTPUT rules rewrite it; one without endpoints then goes nowhere.
		func() error { return ns.Run(ctx, "ip", "route", "add", serviceCIDR, "dev", nodeIface) },
		// Per network namespace: the node routes between its Pods, the host and the links tests give it.
		func() error { return ns.Run(ctx, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1") },
	}
	// Pods reach the node, the host's end of the link (the API server), Services and each other; a packet from the
	// Pods' bridge to anywhere else is dropped, so no Pod's traffic leaves the machine (the node has no default
	// route either). AllowPodsTo adds links.
	for _, rule := range [][]string{
		{"-N", podEgressChain},
		{"-A", podEgressChain, "-i", podBridge, "-o", nodeIface, "-d", HostIP + "/32", "-j", "ACCEPT"},
		{"-A", podEgressChain, "-i", podBridge, "!", "-o", podBridge, "-j", "DROP"},
		{"-I", "FORWARD", "-j", podEgressChain},
	} {
		steps = append(steps, func() error { return ns.Run(ctx, "iptables", rule...) })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// refuseConflicts names what on this machine the node would have to share: addresses of the node's ranges already
// routed on the host (another program's network would be shadowed), or a link of the node's name that is not the
// node's.
func refuseConflicts() error {
	if _, err := net.InterfaceByName(nodeLink); err == nil {
		return fmt.Errorf("devcluster: a link named %s exists on this machine and no node of this machine owns it: remove it, or stop what made it", nodeLink)
	}
	_, nodeNet, _ := net.ParseCIDR(nodeRange)
	_, svcNet, _ := net.ParseCIDR(serviceCIDR)
	out, err := exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	if err != nil {
		return fmt.Errorf("ip route: %w", err)
	}
	var clashes []string
	for _, line := range nonEmptyLines(out) {
		f := strings.Fields(line)
		dst := f[0]
		if dst == "default" || dst == "local" || dst == "broadcast" || dst == "unreachable" || dst == "blackhole" || dst == "prohibit" {
			if len(f) < 2 || dst == "default" {
				continue
			}
			dst = f[1]
		}
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		ip, ipnet, err := net.ParseCIDR(dst)
		if err != nil {
			continue
		}
		for _, mine := range []*net.IPNet{nodeNet, svcNet} {
			if mine.Contains(ip) || ipnet.Contains(mine.IP) {
				clashes = append(clashes, line)
			}
		}
	}
	if len(clashes) > 0 {
		return fmt.Errorf("devcluster: the node's addresses (%s, Services %s) are already routed on this machine, so the node would shadow another network; refusing to start:\n  %s",
			nodeRange, serviceCIDR, strings.Join(clashes, "\n  "))
	}
	return nil
}

// cgroupHierarchies are the mounted cgroup hierarchies: each of cgroup v1's, or cgroup v2's one.
func cgroupHierarchies() ([]string, error) {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(mounts), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 || g[0] != "cgroup" && g[0] != "cgroup2" {
			continue
		}
		out = append(out, f[4])
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// nodeCgroups are the node's cgroup in every hierarchy.
func nodeCgroups() []string {
	hs, _ := cgroupHierarchies()
	var out []string
	for _, h := range hs {
		out = append(out, filepath.Join(h, cgroupParent))
	}
	return out
}

// cgroupWrap is the command line that puts a process into the node's cgroups before it execs what follows, with
// SIGTERM ignored until a program installs its own handler (see netns.Namespace.EnterArgs).
func cgroupWrap() []string {
	var procs []string
	for _, cg := range nodeCgroups() {
		procs = append(procs, filepath.Join(cg, "cgroup.procs"))
	}
	return []string{"sh", "-c", `trap '' TERM; IFS=:; for f in $0; do echo $$ > "$f" || exit 1; done; exec "$@"`, strings.Join(procs, ":")}
}

// claimNode creates the node's cgroups: one node per machine. A node whose processes all died (a test binary that
// was killed, with its namespaces) leaves only empty cgroups of the node's, which are removed; a running one is
// refused.
func claimNode() error {
	if running := NodeProcesses(); len(running) > 0 {
		slices.Sort(running)
		dir := runningNodeDir(running)
		return fmt.Errorf("devcluster: a node already runs on this machine, from %s (processes %v in cgroup %s); one node per machine: stop it with `go run ./tools/devcluster down --dir %s`",
			dir, slices.Compact(running), cgroupParent, dir)
	}
	if err := removeNodeCgroups(); err != nil {
		return err
	}
	for _, cg := range nodeCgroups() {
		if err := os.Mkdir(cg, 0o755); err != nil {
			return fmt.Errorf("devcluster: creating the node's cgroup: %w", err)
		}
		// A cpuset cgroup takes no process until it has CPUs and memory nodes: the root's.
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if v, err := os.ReadFile(filepath.Join(filepath.Dir(cg), f)); err == nil {
				if err := os.WriteFile(filepath.Join(cg, f), v, 0o644); err != nil {
					return fmt.Errorf("devcluster: %s of the node's cgroup: %w", f, err)
				}
			}
		}
	}
	return nil
}

// runningNodeDir is the data directory of the node whose processes are pids, read off containerd's command line
// (--config <dir>/node/containerd.toml), or a placeholder.
func runningNodeDir(pids []int) string {
	suffix := string(filepath.Separator) + filepath.Join("node", "containerd.toml")
	for _, pid := range pids {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		for _, arg := range strings.Split(string(b), "\x00") {
			if strings.HasSuffix(arg, suffix) {
				return strings.TrimSuffix(arg, suffix)
			}
		}
	}
	return "DIR"
}

// cgroupProcs lists the processes in a cgroup and its children.
func cgroupProcs(dir string) []int {
	var pids []int
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, l := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(l); err == nil && pid > 1 {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}

// NodeProcesses lists the processes of this machine's node, whoever started it: those in its cgroup. Empty when no
// node runs.
func NodeProcesses() []int {
	var procs []int
	for _, cg := range nodeCgroups() {
		procs = append(procs, cgroupProcs(cg)...)
	}
	return procs
}

// nodeOwnedBy says whether the machine's node, if any, is the one of the cluster in dir: none of its processes is
// left, or one of them names dir on its command line (the kubelet's and containerd's do).
func nodeOwnedBy(dir string) bool {
	procs := NodeProcesses()
	if len(procs) == 0 {
		return true
	}
	return slices.ContainsFunc(procs, func(pid int) bool { return ownedBy(pid, dir) })
}

// stopNodeProcesses kills every process left in the node's cgroups (containerd's shims, containers of Pods that were
// not deleted, the namespaces' holder) and waits until none is left: they are all the node's.
func stopNodeProcesses() error {
	return poll.Wait(context.Background(), 15*time.Second, "devcluster: the node's cgroup emptied by SIGKILL", func() (bool, string, error) {
		left := NodeProcesses()
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return len(left) == 0, fmt.Sprintf("processes %v left", left), nil
	})
}

// removeNodeCgroups removes the node's cgroups, deepest first (a cgroup with children cannot be removed).
func removeNodeCgroups() error {
	var errs []error
	for _, cg := range nodeCgroups() {
		var dirs []string
		_ = filepath.WalkDir(cg, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		slices.Reverse(dirs)
		for _, d := range dirs {
			if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// waitLinkGone waits for the host's end of the node's link, which the kernel removes once the node's network
// namespace is freed (asynchronously, after its last process), and deletes it if it lingers.
func waitLinkGone() error {
	if poll.Wait(context.Background(), 5*time.Second, "link "+nodeLink+" gone", func() (bool, string, error) {
		_, err := net.InterfaceByName(nodeLink)
		return err != nil, "", nil
	}) == nil {
		return nil
	}
	return deleteLink(nodeLink)
}

// deleteLink deletes a link of the node's; one already gone is the outcome wanted.
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
