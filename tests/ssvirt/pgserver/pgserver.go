// Package pgserver runs a throwaway PostgreSQL server for tests: Debian's initdb and pg_ctl on a temporary data
// directory, listening on a free loopback port, trust authentication, no Unix socket. initdb refuses to run as
// root, so as root (CI) the server runs as the postgres account the Debian package creates, which then owns the
// data directory.
package pgserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
)

// Server is a running (or stopped) PostgreSQL server.
type Server struct {
	binDir, dir, runAs string
	port               int
	host               string
}

// Options says where a server listens beyond the default loopback.
type Options struct {
	// Host is the address to listen on (default 127.0.0.1): a local cluster's node address for Pods to reach it.
	Host string
	// TrustNetworks are CIDRs whose clients connect without a password, besides loopback (a node's Pod range).
	TrustNetworks []string
}

// User is the superuser the server is initialised with.
const User = "ssvirt"

// BinDir finds PostgreSQL's server programs: $PG_BINDIR, else the newest /usr/lib/postgresql/<version>/bin,
// else the directory of pg_ctl on PATH.
func BinDir() (string, error) {
	if d := os.Getenv("PG_BINDIR"); d != "" {
		return d, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	if len(matches) > 0 {
		return filepath.Dir(matches[0]), nil
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("pgserver: no PostgreSQL server programs found: make debian-packages installs Debian's postgresql, or set PG_BINDIR")
}

func version(pgCtl string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(pgCtl))))
	return v
}

// Start initialises a data directory under a new temporary directory and starts the server on it, on loopback.
func Start(ctx context.Context) (*Server, error) {
	return StartWith(ctx, Options{})
}

// StartWith is Start with a listening address and trusted networks of the caller's.
func StartWith(ctx context.Context, o Options) (*Server, error) {
	binDir, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ssvirt-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{binDir: binDir, dir: dir, host: o.Host}
	if s.host == "" {
		s.host = "127.0.0.1"
	}
	if os.Geteuid() == 0 {
		if err := s.handOver("postgres"); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	if s.port, err = localproc.FreePort(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := s.run(ctx, "initdb", "-D", s.dataDir(), "-U", User, "--auth=trust", "--encoding=UTF8", "--no-sync"); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := s.trust(o.TrustNetworks); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := s.StartAgain(ctx); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// handOver makes the temporary directory the named account's, and runs the programs as it.
func (s *Server) handOver(account string) error {
	u, err := user.Lookup(account)
	if err != nil {
		return fmt.Errorf("pgserver: running as root needs the %q account (created by Debian's postgresql package): %w", account, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(s.dir, uid, gid); err != nil {
		return err
	}
	s.runAs = account
	return nil
}

// trust appends host lines for networks to pg_hba.conf (initdb's lines cover loopback only).
func (s *Server) trust(networks []string) error {
	if len(networks) == 0 {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(s.dataDir(), "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, n := range networks {
		if _, err := fmt.Fprintf(f, "host all all %s trust\n", n); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }

// LogPath is the server's log file.
func (s *Server) LogPath() string { return filepath.Join(s.dir, "postgres.log") }

// DSN is a pgx connection string for database "postgres" as User.
func (s *Server) DSN() string {
	return fmt.Sprintf("postgres://%s@%s/postgres?sslmode=disable", User, net.JoinHostPort(s.host, strconv.Itoa(s.port)))
}

// CreateDatabase creates an empty database and returns its connection string: one per test keeps tests apart.
func (s *Server) CreateDatabase(ctx context.Context, name string) (string, error) {
	if err := s.run(ctx, "createdb", "-h", s.host, "-p", strconv.Itoa(s.port), "-U", User, name); err != nil {
		return "", err
	}
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", User, net.JoinHostPort(s.host, strconv.Itoa(s.port)), name), nil
}

// StartAgain starts a server stopped by Stop, on the same port and data.
func (s *Server) StartAgain(ctx context.Context) error {
	opts := fmt.Sprintf("-h %s -p %d -c unix_socket_directories='' -c fsync=off", s.host, s.port)
	return s.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", s.dataDir(), "-l", s.LogPath(), "-o", opts)
}

// Stop stops the server (fast shutdown: open connections are cut, as in an outage) and keeps its data.
func (s *Server) Stop(ctx context.Context) error {
	return s.run(ctx, "pg_ctl", "stop", "-w", "-m", "fast", "-D", s.dataDir())
}

// Close stops the server if it runs and removes its directory.
func (s *Server) Close() error {
	var errs []error
	if s.running(context.Background()) {
		errs = append(errs, s.Stop(context.Background()))
	}
	errs = append(errs, os.RemoveAll(s.dir))
	return errors.Join(errs...)
}

func (s *Server) running(ctx context.Context) bool {
	return s.run(ctx, "pg_ctl", "status", "-D", s.dataDir()) == nil
}

func (s *Server) run(ctx context.Context, program string, args ...string) error {
	path := filepath.Join(s.binDir, program)
	var cmd *exec.Cmd
	if s.runAs != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", s.runAs, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if log, readErr := os.ReadFile(s.LogPath()); readErr == nil && program == "pg_ctl" {
			msg += "\n" + tail(string(log), 20)
		}
		return fmt.Errorf("pgserver: %s %s: %w\n%s", program, strings.Join(args, " "), err, msg)
	}
	return nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
