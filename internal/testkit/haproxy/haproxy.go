// Package haproxy runs Debian's haproxy (make debian-packages installs it) in master-worker mode on a
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
	// watched: a reload script watches Config, so Reload only replaces the file.
	watched bool
}

// StateDir is where, under a Start or StartWithReloader dir, the reloader keeps its files: a render for that HAProxy
// names it as proxy.Options.StateDir.
func StateDir(dir string) string { return filepath.Join(dir, "haproxy-state") }

// StartWithReloader runs script (the chart's files/haproxy-reload.sh) with /bin/sh as the chart's container does:
// it starts HAProxy on the file and reloads it when the file changes, checking every second.
func StartWithReloader(dir, cfg, addr, script string) (*Proxy, error) {
	if _, err := exec.LookPath("haproxy"); err != nil {
		return nil, fmt.Errorf("haproxy is not installed (make debian-packages installs it): %w", err)
	}
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	p, err := localproc.Start("haproxy-reloader", filepath.Join(dir, "haproxy.log"),
		[]string{"HAPROXY_CFG=" + path, "RELOAD_INTERVAL=1", "STATE_DIR=" + StateDir(dir)}, "/bin/sh", "-c", script)
	if err != nil {
		return nil, err
	}
	if err := p.WaitTCP(addr, 30*time.Second); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return &Proxy{Process: p, Config: path, watched: true}, nil
}

// Start writes cfg into dir and runs haproxy -W (master-worker) -db (foreground); addr is waited for.
func Start(dir, cfg, addr string) (*Proxy, error) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		return nil, fmt.Errorf("haproxy is not installed (make debian-packages installs it): %w", err)
	}
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	// What the reloader writes before it starts HAProxy, which reads it.
	if err := os.MkdirAll(StateDir(dir), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(StateDir(dir), "rejected"), []byte("none\n"), 0o644); err != nil {
		return nil, err
	}
	if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("haproxy -c: %w\n%s", err, out)
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

// Reload checks cfg, writes it and signals the master (or lets the reload script notice the change); it returns
// once the master logged the new workers' start.
func (p *Proxy) Reload(cfg string) error {
	if current, err := os.ReadFile(p.Config); err == nil && string(current) == cfg {
		// An unchanged file reloads nothing; the chart's loop would not notice it either.
		return nil
	}
	tmp := p.Config + ".new"
	if err := os.WriteFile(tmp, []byte(cfg), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command("haproxy", "-c", "-f", tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("haproxy -c rejects the new configuration: %w\n%s", err, out)
	}
	before := p.reloads()
	if err := os.Rename(tmp, p.Config); err != nil {
		return err
	}
	if !p.watched {
		if err := p.Signal(syscall.SIGUSR2); err != nil {
			return err
		}
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
