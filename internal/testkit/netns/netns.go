// Package netns gives tests namespaces of their own without touching the host's: a Namespace is held by a sleeping
// process made with unshare(1), not by a bind mount under /run/netns, so it exists exactly as long as that process
// and goes away with everything in it (links, routes, rules, mounts) when it is closed or when the program that made
// it dies, however it dies. Commands run in it through nsenter(1); Go code listens in it through Listen.
package netns

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/deathsig"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
)

// Options says which namespaces besides a network namespace to make.
type Options struct {
	// Mount makes a private mount namespace (propagation private: nothing mounted in it shows on the host).
	Mount bool
	// PID makes a PID namespace whose first process is the holder: when the holder dies, the kernel kills every
	// process in it, including those of nested PID namespaces (a container's). With Mount, the namespaces' /proc is
	// then the PID namespace's own, so everything run in them sees one numbering.
	PID bool
	// Detach lets the namespaces outlive the program that made them (`devcluster up`); they then last until the
	// holder is killed.
	Detach bool
	// Wrap is a command line the holder is started through (it must exec what follows it), such as one that puts
	// the holder into a cgroup of the caller's.
	Wrap []string
}

// Namespace is a set of namespaces held by one process.
type Namespace struct {
	opts   Options
	holder *exec.Cmd // unshare, the parent of the process inside
	pid    int       // the process inside: the target of nsenter
	done   chan struct{}
	close  sync.Once
}

// New makes the namespaces. They die with the calling program: the holder has a parent-death signal.
func New(opts Options) (*Namespace, error) {
	args := []string{"--net", "--fork", "--kill-child"}
	if opts.Mount {
		args = append(args, "--mount", "--propagation", "private")
	}
	if opts.PID {
		args = append(args, "--pid")
	}
	// sleep(1) needs nothing: a process that only exists. As the first process of a PID namespace it would also
	// inherit every orphan there and never reap it, so tini (Debian's, a node package) runs it then.
	args = append(args, "--")
	if opts.PID {
		args = append(args, "tini", "-s", "--")
	}
	args = append(args, "sleep", "infinity")
	full := append(append(slices.Clone(opts.Wrap), "unshare"), args...)
	cmd := exec.Command(full[0], full[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	start := deathsig.StartOnSpawnerThread
	if !opts.Detach {
		start = func(cmd *exec.Cmd) error { return deathsig.Start(cmd, syscall.SIGKILL) }
	}
	if err := start(cmd); err != nil {
		return nil, fmt.Errorf("netns: unshare: %w", err)
	}
	ns := &Namespace{opts: opts, holder: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(ns.done) }()
	pid, err := ns.waitChild()
	if err != nil {
		ns.Close()
		return nil, err
	}
	ns.pid = pid
	if opts.Mount && opts.PID {
		if err := ns.Run(context.Background(), "mount", "-t", "proc", "proc", "/proc"); err != nil {
			ns.Close()
			return nil, err
		}
	}
	return ns, nil
}

// waitChild finds the process unshare forked into the new namespaces.
func (ns *Namespace) waitChild() (int, error) {
	parent := ns.holder.Process.Pid
	var pid int
	var exited error // unshare exited: the wait ends at once
	// Every 10 ms: each test's namespaces are made this way.
	err := poll.WaitEvery(context.Background(), 10*time.Second, 10*time.Millisecond, "netns: unshare's child in new namespaces",
		func() (bool, string, error) {
			select {
			case <-ns.done:
				exited = fmt.Errorf("netns: unshare exited: %v", ns.holder.ProcessState)
				return true, "", nil
			default:
			}
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", parent, parent))
			f := strings.Fields(string(b))
			if len(f) == 0 {
				return false, "unshare has no child", nil
			}
			child, err := strconv.Atoi(f[0])
			if err != nil {
				return false, "", err
			}
			// The child exists before it has exec'd sleep: wait until it is in its namespaces.
			if mine, theirs := nsID("self", "net"), nsID(f[0], "net"); theirs == "" || theirs == mine {
				return false, "child " + f[0] + " not in a network namespace of its own", nil
			}
			pid = child
			return true, "", nil
		})
	if exited != nil {
		return 0, exited
	}
	return pid, err
}

func nsID(pid, kind string) string {
	id, _ := os.Readlink("/proc/" + pid + "/ns/" + kind)
	return id
}

// PID is the process inside the namespaces (pid 1 of the PID namespace, if there is one), as the host sees it.
func (ns *Namespace) PID() int { return ns.pid }

// Alive reports whether the namespaces still exist.
func (ns *Namespace) Alive() bool {
	select {
	case <-ns.done:
		return false
	default:
		return true
	}
}

// EnterArgs is the nsenter command line that runs a program in the namespaces, followed by the program and its
// arguments. Without a PID namespace the program execs in place, so its pid is the one the caller started. In one (a
// process that joined a PID namespace cannot start threads, so nsenter forks) the program is nsenter's child, in
// nsenter's process group: signal the group, and start nsenter with SIGTERM ignored so that it waits for the program
// and exits with its status (a Go program installs its own SIGTERM handler whatever it inherits).
func (ns *Namespace) EnterArgs(dir string) []string {
	args := []string{"nsenter", "--target", strconv.Itoa(ns.pid), "--net"}
	if ns.opts.Mount {
		args = append(args, "--mount")
		if dir != "" {
			// Entering a mount namespace moves the working directory to its root.
			args = append(args, "--wd="+dir)
		}
	}
	if ns.opts.PID {
		args = append(args, "--pid")
	}
	return append(args, "--")
}

// Command is exec.CommandContext for a program run in the namespaces.
func (ns *Namespace) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	full := append(ns.EnterArgs(""), name)
	return exec.CommandContext(ctx, full[0], append(full[1:], args...)...)
}

// Run runs a program in the namespaces and returns its error with its output.
func (ns *Namespace) Run(ctx context.Context, name string, args ...string) error {
	if out, err := ns.Command(ctx, name, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s (in namespace %d): %w: %s", name, strings.Join(args, " "), ns.pid, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Listen opens a listener in the namespaces' network namespace: the socket is made on a thread that has joined it,
// and stays there once the thread has gone back.
func (ns *Namespace) Listen(network, address string) (net.Listener, error) {
	var ln net.Listener
	err := ns.onThread(func() (err error) { ln, err = net.Listen(network, address); return })
	return ln, err
}

// onThread runs f on an OS thread that has joined the network namespace, then puts the thread back.
func (ns *Namespace) onThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		host, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			errc <- err
			runtime.UnlockOSThread()
			return
		}
		defer host.Close()
		target, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", ns.pid))
		if err != nil {
			errc <- err
			runtime.UnlockOSThread()
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("netns: setns: %w", err)
			runtime.UnlockOSThread()
			return
		}
		errc <- f()
		if err := unix.Setns(int(host.Fd()), unix.CLONE_NEWNET); err != nil {
			// The thread stays locked and dies with this goroutine rather than serve others in the wrong namespace.
			return
		}
		runtime.UnlockOSThread()
	}()
	return <-errc
}

// Close kills the holder, and with it the namespaces and, in a PID namespace, every process in them. It returns
// once the holder has been reaped.
func (ns *Namespace) Close() {
	ns.close.Do(func() {
		_ = syscall.Kill(-ns.holder.Process.Pid, syscall.SIGKILL)
		<-ns.done
		if ns.pid > 0 {
			// The process inside is unshare's child; --kill-child has killed it, wait until it is gone.
			_ = poll.WaitEvery(context.Background(), 5*time.Second, 10*time.Millisecond, fmt.Sprintf("netns: process %d gone", ns.pid),
				func() (bool, string, error) { return !deathsig.Alive(ns.pid), "", nil })
		}
	})
}
