package devcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ContainerProcess describes a running container's main process as the node's kernel sees it: proof of what a
// Pod's securityContext really did, not what its spec asked for.
type ContainerProcess struct {
	PID           int
	UID, GID      int
	ReadOnlyRoot  bool
	NoNewPrivs    bool
	EffectiveCaps string // CapEff from /proc/<pid>/status
}

// ContainerProcess finds the main process of a container of a running Pod through containerd and reads its
// identity, its root mount and its privileges from /proc.
func (c *Cluster) ContainerProcess(ctx context.Context, namespace, pod, container string) (*ContainerProcess, error) {
	p, err := c.kube.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var id string
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == container {
			id = strings.TrimPrefix(s.ContainerID, "containerd://")
		}
	}
	if id == "" {
		return nil, fmt.Errorf("devcluster: %s/%s has no running container %q", namespace, pod, container)
	}
	out, err := c.ctr(ctx, nil, "tasks", "ls")
	if err != nil {
		return nil, fmt.Errorf("ctr tasks ls: %w: %s", err, out)
	}
	cp := &ContainerProcess{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == id {
			// containerd's shims run in the node's PID namespace and report pids as it numbers them.
			nsPID, _ := strconv.Atoi(f[1])
			cp.PID = hostPID(nsPID)
		}
	}
	if cp.PID == 0 {
		return nil, fmt.Errorf("devcluster: containerd has no task %s", id)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cp.PID))
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "Uid:":
			cp.UID, _ = strconv.Atoi(f[2]) // effective
		case "Gid:":
			cp.GID, _ = strconv.Atoi(f[2])
		case "NoNewPrivs:":
			cp.NoNewPrivs = f[1] == "1"
		case "CapEff:":
			cp.EffectiveCaps = f[1]
		}
	}
	mounts, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", cp.PID))
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		// id parent major:minor root mountpoint options ...
		if f := strings.Fields(line); len(f) > 5 && f[4] == "/" {
			cp.ReadOnlyRoot = strings.Split(f[5], ",")[0] == "ro"
		}
	}
	return cp, nil
}

// hostPID is the host's pid of the node's process nsPID (as the node's PID namespace numbers it), or 0: the process
// in the node's cgroup whose NSpid has nsPID at the node's level, the one below the host's.
func hostPID(nsPID int) int {
	statuses, _ := filepath.Glob("/proc/[0-9]*/status")
	for _, path := range statuses {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 || f[0] != "NSpid:" || f[2] != strconv.Itoa(nsPID) {
				continue
			}
			cg, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "cgroup"))
			if strings.Contains(string(cg), "/"+cgroupParent+"/") || strings.Contains(string(cg), "/"+cgroupParent+"\n") {
				pid, _ := strconv.Atoi(f[1])
				return pid
			}
		}
	}
	return 0
}
