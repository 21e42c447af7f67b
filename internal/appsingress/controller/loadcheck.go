package controller

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/proxy"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
)

// loadCheck asks every CoreDNS and HAProxy replica what it serves: writing a ConfigMap says nothing about when the
// kubelet updates the mounted files (up to a minute), nor whether HAProxy accepted them.
type loadCheck struct {
	dns, proxy Replicas
	timeout    time.Duration
	http       *http.Client
}

func newLoadCheck(dnsReplicas, proxyReplicas Replicas, timeout time.Duration) *loadCheck {
	return &loadCheck{
		dns: dnsReplicas, proxy: proxyReplicas, timeout: timeout,
		// Straight to the Pod, never through an environment proxy.
		http: &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}},
	}
}

// dnsServes says whether every CoreDNS replica answers c's names as published: the default view with proxyIPs, the
// VLAN view (asked through its probe name) with the external IPs. The message says which replica answers what, and
// lagging is the first replica that does not (invalid when none is ready).
func (l *loadCheck) dnsServes(ctx context.Context, c routes.Cluster, proxyIPs []netip.Addr) (ok bool, lagging netip.AddrPort, msg string, err error) {
	replicas, err := l.dns.Addresses(ctx)
	if err != nil {
		return false, lagging, "", err
	}
	if len(replicas) == 0 {
		return false, lagging, "no CoreDNS replica is ready", nil
	}
	type question struct {
		name string
		want []netip.Addr
	}
	var qs []question
	if len(c.ExternalIPs) > 0 {
		qs = append(qs, question{dns.DefaultProbeName(c), proxyIPs})
		if len(c.VLANCIDRs) > 0 {
			qs = append(qs, question{dns.VLANProbeName(c), c.ExternalIPs})
		}
	}
	if c.APIEndpoint != "" {
		qs = append(qs, question{c.APIName(), proxyIPs})
	}
	for _, r := range replicas {
		for _, q := range qs {
			got, err := l.lookup(ctx, r, q.name)
			if err != nil {
				return false, r, fmt.Sprintf("CoreDNS %s does not answer %s yet: %v", r, q.name, err), nil
			}
			if !sameAddrs(got, q.want) {
				return false, r, fmt.Sprintf("CoreDNS %s answers %s with %s, not yet %s", r, q.name, join(got), join(q.want)), nil
			}
		}
	}
	return true, lagging, fmt.Sprintf("%d CoreDNS replica(s) answer the new records", len(replicas)), nil
}

// lookup asks server for name's A and AAAA records over UDP; anything but an answer (NOERROR, possibly empty) is an
// error naming the rcode.
func (l *loadCheck) lookup(ctx context.Context, server netip.AddrPort, name string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	var out []netip.Addr
	for i, typ := range []dnsmessage.Type{dnsmessage.TypeA, dnsmessage.TypeAAAA} {
		addrs, err := query(ctx, server, name, typ, uint16(i+1))
		if err != nil {
			return nil, err
		}
		out = append(out, addrs...)
	}
	return out, nil
}

func query(ctx context.Context, server netip.AddrPort, name string, typ dnsmessage.Type, id uint16) ([]netip.Addr, error) {
	resp, err := exchange(ctx, server, name, typ, id)
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, a := range resp.Answers {
		switch r := a.Body.(type) {
		case *dnsmessage.AResource:
			out = append(out, netip.AddrFrom4(r.A))
		case *dnsmessage.AAAAResource:
			out = append(out, netip.AddrFrom16(r.AAAA))
		}
	}
	return out, nil
}

// dnsGeneration asks a CoreDNS replica which configuration it runs: the generation its Corefile was written with
// (dns.GenerationName).
func (l *loadCheck) dnsGeneration(ctx context.Context, server netip.AddrPort) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	resp, err := exchange(ctx, server, dns.GenerationName, dnsmessage.TypeTXT, 3)
	if err != nil {
		return "", err
	}
	for _, a := range resp.Answers {
		if txt, ok := a.Body.(*dnsmessage.TXTResource); ok && len(txt.TXT) > 0 {
			return txt.TXT[0], nil
		}
	}
	return "", fmt.Errorf("no generation in the answer")
}

// exchange sends one question to server over UDP and returns the answer; an rcode other than NOERROR is an error.
func exchange(ctx context.Context, server netip.AddrPort, name string, typ dnsmessage.Type, id uint16) (*dnsmessage.Message, error) {
	qname, err := dnsmessage.NewName(name + ".")
	if err != nil {
		return nil, err
	}
	msg := dnsmessage.Message{Header: dnsmessage.Header{ID: id}, Questions: []dnsmessage.Question{{Name: qname, Type: typ, Class: dnsmessage.ClassINET}}}
	packed, err := msg.Pack()
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", server.String())
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	if _, err := conn.Write(packed); err != nil {
		return nil, err
	}
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return nil, fmt.Errorf("no answer: %w", err)
		}
		var resp dnsmessage.Message
		if err := resp.Unpack(buf[:n]); err != nil || resp.ID != id {
			continue
		}
		if resp.RCode != dnsmessage.RCodeSuccess {
			return nil, fmt.Errorf("%s answered %s", typ, resp.RCode)
		}
		return &resp, nil
	}
}

// servedID is a file of the proxy's configuration as a replica must serve it: the status path that gives the ConfigID
// it loaded, and the ConfigID published.
type servedID struct {
	path, id string
}

// proxyServes says whether every HAProxy replica's new connections are served by the files wants names as rendered
// at or after the render an object waits for (accepted reports which ids qualify), or why not: a replica whose
// reloader refused one of those files gives HAProxy's message.
func (l *loadCheck) proxyServes(ctx context.Context, wants []servedID, accepted func(id string) bool) (ok, rejected bool, msg string, err error) {
	replicas, err := l.proxy.Addresses(ctx)
	if err != nil {
		return false, false, "", err
	}
	if len(replicas) == 0 {
		return false, false, "no HAProxy replica is ready", nil
	}
	for _, r := range replicas {
		for _, want := range wants {
			got, err := l.get(ctx, r, want.path)
			if err != nil {
				return false, false, fmt.Sprintf("HAProxy %s: %v", r, err), nil
			}
			if accepted(strings.TrimSpace(got)) {
				continue
			}
			if refusal, err := l.get(ctx, r, proxy.RejectedPath); err == nil {
				ids, message, _ := strings.Cut(refusal, "\n")
				if slices.Contains(strings.Fields(ids), want.id) {
					return false, true, fmt.Sprintf("HAProxy %s refused configuration %s: %s", r, want.id, truncate(strings.TrimSpace(message), 800)), nil
				}
			}
			return false, false, fmt.Sprintf("HAProxy %s serves configuration %s at %s, not yet %s", r, strings.TrimSpace(got), want.path, want.id), nil
		}
	}
	return true, false, fmt.Sprintf("%d HAProxy replica(s) serve configuration %s or newer", len(replicas), wants[len(wants)-1].id), nil
}

func (l *loadCheck) get(ctx context.Context, r netip.AddrPort, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.String()+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := l.http.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return string(body), nil
}

func sameAddrs(a, b []netip.Addr) bool {
	norm := func(in []netip.Addr) []netip.Addr {
		out := make([]netip.Addr, len(in))
		for i, x := range in {
			out[i] = x.Unmap()
		}
		slices.SortFunc(out, func(x, y netip.Addr) int { return x.Compare(y) })
		return slices.Compact(out)
	}
	return slices.Equal(norm(a), norm(b))
}

func join(as []netip.Addr) string {
	if len(as) == 0 {
		return "nothing"
	}
	ss := make([]string, len(as))
	for i, a := range as {
		ss[i] = a.String()
	}
	return strings.Join(ss, ", ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
