// Package haproxy runs Debian's haproxy (apt-get install haproxy; .ci/run installs it) in master-worker mode on a
// configuration a test writes, and reloads it the way the chart's reloader does: SIGUSR2 to the master, which
// starts new workers and lets the old ones finish their connections.
package haproxy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
)

// Proxy is a running HAProxy master.
type Proxy struct {
	*localproc.Process
	Config string
}

// Start writes cfg into dir and runs haproxy -W (master-worker) -db (foreground); addr is waited for.
func Start(dir, cfg, addr string) (*Proxy, error) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		return nil, fmt.Errorf("haproxy is not installed (apt-get install -y haproxy; .ci/run does it): %w", err)
	}
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("haproxy -c: %v\n%s", err, out)
	}
	p, err := localproc.Start("haproxy", filepath.Join(dir, "haproxy.log"), nil, bin, "-W", "-db", "-f", path)
	if err != nil {
		return nil, err
	}
	if err := p.WaitTCP(addr, 30*time.Second); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return &Proxy{Process: p, Config: path}, nil
}

// Reload checks cfg, writes it and signals the master; it returns once the master logged the new workers' start.
func (p *Proxy) Reload(cfg string) error {
	tmp := p.Config + ".new"
	if err := os.WriteFile(tmp, []byte(cfg), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command("haproxy", "-c", "-f", tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("haproxy -c rejects the new configuration: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, p.Config); err != nil {
		return err
	}
	before := p.reloads()
	if err := p.Signal(syscall.SIGUSR2); err != nil {
		return err
	}
	deadline := time.Now().Add(15 * time.Second)
	for p.reloads() <= before {
		if time.Now().After(deadline) {
			return fmt.Errorf("haproxy did not report a reload:\n%s", p.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// reloads counts the master's reload messages in the log.
func (p *Proxy) reloads() int {
	data, _ := os.ReadFile(p.LogPath)
	return strings.Count(string(data), "Loading success")
}
