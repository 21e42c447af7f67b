package devcluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/deathsig"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
)

// stopTimeout is how long a component gets to exit after SIGTERM before its process group is killed.
// Kyverno and kube-controller-manager need about a second, etcd up to ~7 s while the API server is still
// connected. A variable so that tests need not wait for it.
var stopTimeout = 10 * time.Second

// process is one component run as a child process. Its pid is written to <dir>/pids so that a later
// `devcluster down`, run from another process, can find it; stdout and stderr go straight to a file so
// the component keeps logging after the `up` command that started it has exited.
type process struct {
	name string
	bin  string
	args []string
	env  []string // added to the parent's environment
	// wrap is a command line the process is started through, which execs bin and args in the end (into the node's
	// cgroup and namespaces), so that the pid is bin's.
	wrap []string

	dataDir string
	// detach lets the process outlive this program (the CLI's `up`). Otherwise the kernel kills it when
	// this program exits, however it exits: a test binary killed by -timeout leaves nothing behind.
	detach bool
	// stopGrace overrides stopTimeout for components that need no graceful shutdown.
	stopGrace time.Duration

	mu      sync.Mutex
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{} // closed when the process has exited and been reaped
	waitErr error
}

func pidPath(dataDir, name string) string { return filepath.Join(dataDir, "pids", name+".pid") }
func logPath(dataDir, name string) string { return filepath.Join(dataDir, "logs", name+".log") }

func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !p.exitedLocked() {
		return fmt.Errorf("%s is already running (pid %d)", p.name, p.cmd.Process.Pid)
	}
	for _, d := range []string{"pids", "logs"} {
		if err := os.MkdirAll(filepath.Join(p.dataDir, d), 0o755); err != nil {
			return err
		}
	}
	// Appending keeps the log of an earlier run of the same component (StopComponent/StartComponent).
	logFile, err := os.OpenFile(logPath(p.dataDir, p.name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child holds its own descriptor
	fmt.Fprintf(logFile, "=== devcluster %s: %s %s\n", time.Now().Format(time.RFC3339), p.bin, strings.Join(p.args, " "))

	line := append(append(slices.Clone(p.wrap), p.bin), p.args...)
	cmd := exec.Command(line[0], line[1:]...)
	cmd.Dir = p.dataDir
	cmd.Env = append(componentEnv(), p.env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// A session of its own: the component outlives `devcluster up`, is not hit by the Ctrl-C meant for the
	// shell's foreground job, and can be stopped with everything it may have spawned by signalling -pid.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	start := deathsig.StartOnSpawnerThread
	if !p.detach {
		start = func(cmd *exec.Cmd) error { return deathsig.Start(cmd, syscall.SIGKILL) }
	}
	if err := start(cmd); err != nil {
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	p.cmd = cmd
	p.started = time.Now()
	p.done = make(chan struct{})
	p.waitErr = nil
	go func(cmd *exec.Cmd, done chan struct{}) {
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(done)
	}(cmd, p.done)
	if err := os.WriteFile(pidPath(p.dataDir, p.name), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return err
	}
	return nil
}

// componentEnv is the parent's environment without variables that would point a component at some other
// cluster than the one it is told about by flags.
func componentEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "KUBECONFIG=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func (p *process) exitedLocked() bool {
	if p.done == nil {
		return true
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exited reports whether the process has stopped, and how.
func (p *process) exited() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return true, nil
	}
	if !p.exitedLocked() {
		return false, nil
	}
	return true, p.waitErr
}

// crashError describes a component that stopped on its own, with the end of its log: that is nearly always
// where the reason is (a bad flag, a port in use, a refused connection).
func (p *process) crashError() error {
	ok, err := p.exited()
	if !ok {
		return nil
	}
	status := "exited"
	if err != nil {
		status = err.Error()
	}
	return fmt.Errorf("%s stopped unexpectedly (%s); last lines of %s:\n%s",
		p.name, status, logPath(p.dataDir, p.name), tailFile(logPath(p.dataDir, p.name), 30))
}

func (p *process) stop() error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if ok, _ := p.exited(); ok {
		// Already gone (crashed, or stopped before): its pid may belong to someone else by now.
		_ = os.Remove(pidPath(p.dataDir, p.name))
		return nil
	}
	grace := stopTimeout
	if p.stopGrace > 0 {
		grace = p.stopGrace
	}
	err := terminate(cmd.Process.Pid, grace, func(d time.Duration) bool {
		select {
		case <-done:
			return true
		case <-time.After(d):
			return false
		}
	})
	_ = os.Remove(pidPath(p.dataDir, p.name))
	return err
}

// terminate sends SIGTERM to the process group of pid, waits up to grace, then SIGKILLs the group.
// gone(d) waits at most d and reports whether the process has exited.
func terminate(pid int, grace time.Duration, gone func(d time.Duration) bool) error {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	if gone(grace) {
		// The leader is gone; anything it spawned into its group goes too.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return nil
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	if gone(5 * time.Second) {
		return nil
	}
	return fmt.Errorf("process %d survived SIGKILL", pid)
}

// stopPidFile stops a component started by another devcluster process, found through its pid file.
// The pid is only trusted if that process still refers to dataDir on its command line, so a pid that the
// kernel has since given to an unrelated process is left alone.
func stopPidFile(path, dataDir string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		_ = os.Remove(path)
		return nil
	}
	if !ownedBy(pid, dataDir) {
		_ = os.Remove(path)
		return nil
	}
	err = terminate(pid, stopTimeout, func(d time.Duration) bool {
		// Every 50 ms rather than poll.Interval: `devcluster down` stops each component in turn.
		return poll.WaitEvery(context.Background(), d, 50*time.Millisecond, fmt.Sprintf("process %d gone", pid),
			func() (bool, string, error) { return !deathsig.Alive(pid), "", nil }) == nil
	})
	if err == nil {
		_ = os.Remove(path)
	}
	return err
}

func ownedBy(pid int, dataDir string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return bytes.Contains(cmdline, []byte(dataDir))
}

// tailFile returns the last n lines of a file, or a note saying why it could not.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
