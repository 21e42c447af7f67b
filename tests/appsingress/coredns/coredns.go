// Package coredns runs the real CoreDNS (built from the pinned module tools/devcluster/binaries/coredns) on files a
// test writes, the way a CoreDNS Deployment serves a ConfigMap volume: the files change in place, the reload plugin
// picks up a changed Corefile and the file plugin a changed zone.
package coredns

import (
	"context"
	"path/filepath"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/filesync"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
)

// Build returns the path of the CoreDNS binary, building it on first use.
func Build(ctx context.Context) (string, error) {
	return devcluster.BuildCoreDNS(ctx, nil)
}

// Server is a running CoreDNS.
type Server struct {
	*localproc.Process
	volume *Volume
}

// Start writes files into configDir (laid out as a kubelet lays out a ConfigMap volume; a Corefile naming other files
// must name them in that directory) and serves its "Corefile"; addr (host:port, TCP) is waited for. The log
// goes beside the directory.
func Start(ctx context.Context, configDir string, files map[string]string, addr string) (*Server, error) {
	bin, err := Build(ctx)
	if err != nil {
		return nil, err
	}
	v := &Volume{Dir: configDir}
	if err := v.Write(files); err != nil {
		return nil, err
	}
	p, err := localproc.Start("coredns", configDir+".log", nil, bin, "-conf", filepath.Join(configDir, "Corefile"))
	if err != nil {
		return nil, err
	}
	if err := p.WaitTCP(addr, 30*time.Second); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return &Server{Process: p, volume: v}, nil
}

// Files is the content of the served files, for a test's failure message.
func (s *Server) Files() string {
	return s.volume.Dump()
}

// Update replaces the served files at once, as a ConfigMap volume update does; CoreDNS's reload and file plugins
// apply them.
func (s *Server) Update(files map[string]string) error {
	return s.volume.Write(files)
}

// Stage prepares an Update whose files replace the served ones at its Commit, for a test that needs them to change
// at a given moment (writing a large set takes a while, the swap does not).
func (s *Server) Stage(files map[string]string) (*filesync.Staged, error) {
	return s.volume.Stage(files)
}
