// Package coredns runs the real CoreDNS (built from the pinned module tools/devcluster/binaries/coredns) on a
// Corefile a test writes, the way a CoreDNS Deployment serves a ConfigMap: the file changes in place and the reload
// plugin picks it up.
package coredns

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
)

// Build returns the path of the CoreDNS binary, building it on first use.
func Build(ctx context.Context) (string, error) {
	return devcluster.BuildTool(ctx, "coredns", "coredns", "github.com/coredns/coredns", "github.com/coredns/coredns", nil)
}

// Server is a running CoreDNS.
type Server struct {
	*localproc.Process
	Corefile string
}

// Start writes corefile into dir and serves it; addr (host:port, TCP) is waited for.
func Start(ctx context.Context, dir, corefile, addr string) (*Server, error) {
	bin, err := Build(ctx)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(path, []byte(corefile), 0o644); err != nil {
		return nil, err
	}
	p, err := localproc.Start("coredns", filepath.Join(dir, "coredns.log"), nil, bin, "-conf", path)
	if err != nil {
		return nil, err
	}
	if err := p.WaitTCP(addr, 30*time.Second); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return &Server{Process: p, Corefile: path}, nil
}

// Update replaces the Corefile's content (atomically, as a ConfigMap volume does); the reload plugin applies it.
func (s *Server) Update(corefile string) error {
	tmp := s.Corefile + ".tmp"
	if err := os.WriteFile(tmp, []byte(corefile), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.Corefile); err != nil {
		return fmt.Errorf("replacing the Corefile: %w", err)
	}
	return nil
}
