// Package haproxy runs Debian's haproxy (make debian-packages installs it) in master-worker mode on a
// configuration a test writes, and reloads it the way the chart's reloader does: SIGUSR2 to the master, which
// starts new workers and lets the old ones finish their connections.
package haproxy

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/filesync"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
)

// Proxy is a running HAProxy master.
type Proxy struct {
	*localproc.Process
	// ConfigDir is the directory HAProxy loads (-f <dir>), laid out as a ConfigMap volume.
	ConfigDir string
	// watched: a reload script watches ConfigDir, so Reload only replaces the files.
	watched bool
}

// StateDir is where, under a Start or StartWithReloader dir, the reloader keeps its files: a render for that HAProxy
// names it as proxy.Options.StateDir.
func StateDir(dir string) string { return filepath.Join(dir, "haproxy-state") }

// configDir is where, under dir, the configuration's files are.
func configDir(dir string) string { return filepath.Join(dir, "haproxy-config") }

// StartWithReloader runs script (the chart's files/haproxy-reload.sh) with /bin/sh as the chart's container does:
// it starts HAProxy on the files and reloads it when they change, checking every second.
func StartWithReloader(dir string, files map[string]string, addr, script string) (*Proxy, error) {
	if _, err := exec.LookPath("haproxy"); err != nil {
		return nil, fmt.Errorf("haproxy is not installed (make debian-packages installs it): %w", err)
	}
	if err := filesync.Write(configDir(dir), files); err != nil {
		return nil, err
	}
	p, err := localproc.Start("haproxy-reloader", filepath.Join(dir, "haproxy.log"),
		[]string{"CONFIG_DIR=" + configDir(dir), "RELOAD_INTERVAL=1", "STATE_DIR=" + StateDir(dir)}, "/bin/sh", "-c", script)
	if err != nil {
		return nil, err
	}
	if err := p.WaitTCP(addr, 30*time.Second); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return &Proxy{Process: p, ConfigDir: configDir(dir), watched: true}, nil
}

// Start writes files into dir and runs haproxy -W (master-worker) -db (foreground) on them; addr is waited for.
func Start(dir string, files map[string]string, addr string) (*Proxy, error) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		return nil, fmt.Errorf("haproxy is not installed (make debian-packages installs it): %w", err)
	}
	// What the reloader writes before it starts HAProxy, which reads it.
	if err := os.MkdirAll(StateDir(dir), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(StateDir(dir), "rejected"), []byte("none\n"), 0o644); err != nil {
		return nil, err
	}
	cfg := configDir(dir)
	if err := check(files); err != nil {
		return nil, err
	}
	if err := filesync.Write(cfg, files); err != nil {
		return nil, err
	}
	p, err := localproc.Start("haproxy", filepath.Join(dir, "haproxy.log"), nil, bin, "-W", "-db", "-C", cfg, "-f", cfg)
	if err != nil {
		return nil, err
	}
	if err := p.WaitTCP(addr, 30*time.Second); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return &Proxy{Process: p, ConfigDir: cfg}, nil
}

// check runs haproxy -c on files in a directory of their own.
func check(files map[string]string) error {
	dir, err := os.MkdirTemp("", "haproxy-check-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	if out, err := exec.Command("haproxy", "-c", "-C", dir, "-f", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("haproxy -c rejects the configuration: %w\n%s", err, out)
	}
	return nil
}

// Reload checks files, writes them and signals the master (or lets the reload script notice the change); it returns
// once the master logged the new workers' start.
func (p *Proxy) Reload(files map[string]string) error {
	if current, err := p.Files(); err == nil && maps.Equal(current, files) {
		// An unchanged set reloads nothing; the chart's loop would not notice it either.
		return nil
	}
	if err := check(files); err != nil {
		return err
	}
	before := p.reloads()
	if err := filesync.Write(p.ConfigDir, files); err != nil {
		return err
	}
	if !p.watched {
		if err := p.Signal(syscall.SIGUSR2); err != nil {
			return err
		}
	}
	// Every 50 ms: the end-to-end tests and the benchmark time what follows a reload.
	err := poll.WaitEvery(context.Background(), 15*time.Second, 50*time.Millisecond, "haproxy reporting a reload", func() (bool, string, error) {
		n := p.reloads()
		return n > before, fmt.Sprintf("%d reloads logged, %d before", n, before), nil
	})
	if err != nil {
		return fmt.Errorf("%w:\n%s", err, p.Logs())
	}
	return nil
}

// Write writes files as they are, without checking them: what the reloader meets when a bad set arrives.
func (p *Proxy) Write(files map[string]string) error { return filesync.Write(p.ConfigDir, files) }

// Files is the configuration as written.
func (p *Proxy) Files() (map[string]string, error) {
	entries, err := os.ReadDir(p.ConfigDir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(p.ConfigDir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = string(data)
	}
	return out, nil
}

// reloads counts the master's reload messages in the log.
func (p *Proxy) reloads() int {
	data, _ := os.ReadFile(p.LogPath)
	return strings.Count(string(data), "Loading success")
}
