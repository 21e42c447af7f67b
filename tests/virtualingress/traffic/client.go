package traffic

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Response is what one request through the controller got.
type Response struct {
	Status int
	// Backend is the echo Pod that answered (the first word of its answer), "" when no echo Pod did.
	Backend string
	Body    string
	// Certificate is the leaf the controller served (TLS requests only).
	Certificate *x509.Certificate
}

// Client sends requests for any host to one entry point of the controller, as a client resolving every name to the
// controller's address would. Keep-alive connections are reused, as a browser's would be.
type Client struct {
	addr, scheme string
	http         *http.Client
}

// NewClient sends plain HTTP to addr.
func NewClient(addr string) *Client { return newClient(addr, nil) }

// NewTLSClient sends HTTPS to addr, with the request's host as SNI, trusting roots only.
func NewTLSClient(addr string, roots *x509.CertPool) *Client {
	return newClient(addr, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
}

func newClient(addr string, tlsConfig *tls.Config) *Client {
	dialer := &net.Dialer{Timeout: 2 * time.Second}
	transport := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 4,
		// Never a proxy from the environment: requests go to the controller only.
		Proxy: nil,
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	return &Client{addr: addr, scheme: scheme, http: &http.Client{Transport: transport, Timeout: 2 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Get requests path of host.
func (c *Client) Get(ctx context.Context, host, path string) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.scheme+"://"+host+path, nil)
	if err != nil {
		return Response{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("GET %s%s through %s: %w", host, path, c.addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return Response{}, err
	}
	r := Response{Status: resp.StatusCode, Body: string(body)}
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		r.Certificate = resp.TLS.PeerCertificates[0]
	}
	// The echo workload answers "<pod> <method> <host><path>".
	if fields := strings.Fields(r.Body); resp.StatusCode == http.StatusOK && len(fields) == 3 && fields[1] == http.MethodGet {
		r.Backend = fields[0]
	}
	return r, nil
}
