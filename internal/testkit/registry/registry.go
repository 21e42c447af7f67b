// Package registry runs a real OCI registry (CNCF Distribution, built from the pinned module
// tools/devcluster/binaries/registry into bin/devcluster) over TLS with a CA of its own, for tests that publish
// releases and clients (helm, containerd) that pull them the way users do.
package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
)

const module = "github.com/distribution/distribution/v3"

// Build returns the path of the registry binary, building it on first use (about 3 CPU-minutes cold).
func Build(ctx context.Context, progress io.Writer) (string, error) {
	return devcluster.BuildTool(ctx, "registry", "registry", module, module+"/cmd/registry", progress)
}

// Options says where a registry keeps its files and which address it serves.
type Options struct {
	// Dir holds the storage, the configuration, the certificates and the log.
	Dir string
	// IP is the address to listen on; 127.0.0.1 when nil. A node in a network namespace of its own needs an
	// address it can reach.
	IP net.IP
	// Port to listen on; a free one when 0.
	Port int
}

// Registry is a running registry.
type Registry struct {
	// Host is host:port, what image references and oci:// chart references start with.
	Host string
	// CAFile is the PEM CA that signed the serving certificate: what helm's --ca-file, containerd's hosts.toml and
	// the release tool's --ca-file are given.
	CAFile string
	proc   *localproc.Process
}

// Start writes a configuration, starts the registry and waits until it answers /v2/ over TLS.
func Start(ctx context.Context, o Options) (*Registry, error) {
	bin, err := Build(ctx, nil)
	if err != nil {
		return nil, err
	}
	if o.IP == nil {
		o.IP = net.IPv4(127, 0, 0, 1)
	}
	if o.Port == 0 {
		if o.Port, err = localproc.FreePort(); err != nil {
			return nil, err
		}
	}
	host := net.JoinHostPort(o.IP.String(), strconv.Itoa(o.Port))
	pki, err := newServingPKI([]net.IP{o.IP, net.IPv4(127, 0, 0, 1)}, []string{"localhost"})
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"ca.crt": pki.caCert, "tls.crt": pki.cert, "tls.key": pki.key,
		"config.yml": []byte(config(o.Dir, host))}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(o.Dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	proc, err := localproc.Start("registry", filepath.Join(o.Dir, "registry.log"),
		// Distribution reads OTEL_* settings; a test's environment must not send traces anywhere.
		[]string{"OTEL_TRACES_EXPORTER=none", "OTEL_SDK_DISABLED=true"},
		bin, "serve", filepath.Join(o.Dir, "config.yml"))
	if err != nil {
		return nil, err
	}
	r := &Registry{Host: host, CAFile: filepath.Join(o.Dir, "ca.crt"), proc: proc}
	if err := r.waitReady(ctx, pki.caCert); err != nil {
		_ = proc.Stop()
		return nil, err
	}
	return r, nil
}

// config is a registry on the filesystem under dir, TLS only, no authentication, deletes refused (releases are
// immutable; a pre-release is replaced by pushing its tag again).
func config(dir, host string) string {
	return fmt.Sprintf(`version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %q
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: %q
  tls:
    certificate: %q
    key: %q
`, filepath.Join(dir, "storage"), host, filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
}

func (r *Registry) waitReady(ctx context.Context, caPEM []byte) error {
	if err := r.proc.WaitTCP(r.Host, time.Minute); err != nil {
		return err
	}
	c, err := r.Client(caPEM)
	if err != nil {
		return err
	}
	err = poll.Wait(ctx, 30*time.Second, "registry at "+r.Host+" answering GET /v2/", func() (bool, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+r.Host+"/v2/", nil)
		if err != nil {
			return false, "", err
		}
		resp, err := c.Do(req)
		if err != nil {
			return false, "", err
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status, nil
	})
	if err != nil {
		return fmt.Errorf("%w\n%s", err, r.proc.Logs())
	}
	return nil
}

// Client is an HTTP client trusting only the registry's CA (caPEM; the CA file's contents when nil).
func (r *Registry) Client(caPEM []byte) (*http.Client, error) {
	if caPEM == nil {
		var err error
		if caPEM, err = os.ReadFile(r.CAFile); err != nil {
			return nil, err
		}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s: no certificate", r.CAFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr}, nil
}

// Logs is the end of the registry's log, for failure messages.
func (r *Registry) Logs() string { return r.proc.Logs() }

// Stop ends the registry.
func (r *Registry) Stop() error { return r.proc.Stop() }
