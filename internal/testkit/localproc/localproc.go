// Package localproc runs a test's helper program (CoreDNS, HAProxy, MetalLB's controller, ...) as a child process
// with its output in a log file, killed with the test binary even when that dies (Pdeathsig).
package localproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
)

// Process is a running child.
type Process struct {
	Name string
	// LogPath holds its stdout and stderr.
	LogPath string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
}

// Start runs bin with args; env is added to the test's environment.
func Start(name, logPath string, env []string, bin string, args ...string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = log.Close()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop ends the process group: SIGTERM, then SIGKILL after 5 seconds.
func (p *Process) Stop() error {
	if p.Exited() {
		return nil
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	return nil
}

// Logs is the end of the log file, for failure messages.
func (p *Process) Logs() string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	return strings.Join(lines, "\n")
}

// WaitTCP waits until addr accepts a TCP connection, the process exits, or timeout passes.
func (p *Process) WaitTCP(addr string, timeout time.Duration) error {
	var exited error // the process exited: the wait ends at once
	err := poll.Wait(context.Background(), timeout, p.Name+" listening on "+addr, func() (bool, string, error) {
		if p.Exited() {
			exited = fmt.Errorf("%s exited (%w):\n%s", p.Name, p.err, p.Logs())
			return true, "", nil
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, "", err
		}
		_ = c.Close()
		return true, "", nil
	})
	if exited != nil {
		return exited
	}
	if err != nil {
		return fmt.Errorf("%w:\n%s", err, p.Logs())
	}
	return nil
}
