//go:build e2e

package e2e_test

import (
	"net"
	"net/netip"
	"strconv"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/proxy"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/haproxy"
)

// TestUnreachableAddressTakesNoConnections: a cluster with two external IPs of which the proxy can reach only one (an
// IPv6 address on an IPv4-only pod network, an address whose route is gone) still gets every connection through: a
// refused connection is retried on the other address, and the health check takes the dead one out.
func TestUnreachableAddressTakesNoConnections(t *testing.T) {
	const live, dead = "127.0.4.10", "127.0.4.11"
	r := startRouter(t, live, "failover")
	ports := make([]int, 4)
	for i := range ports {
		p, err := localproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	dir := t.TempDir()
	opts := proxy.Options{BindAddress: proxyIP, HTTPPort: ports[0], HTTPSPort: ports[1], APIPort: ports[2], StatusPort: ports[3], StateDir: haproxy.StateDir(dir)}
	cluster := routes.Cluster{Key: "clusters/failover", Name: "failover", BaseDomain: baseDomain, HTTPPort: svcHTTP, HTTPSPort: svcHTTPS,
		ExternalIPs: []netip.Addr{netip.MustParseAddr(live), netip.MustParseAddr(dead)}}
	p, err := haproxy.Start(dir, proxy.Render(opts, []routes.Cluster{cluster}).All(), net.JoinHostPort(proxyIP, strconv.Itoa(ports[1])))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	const connections = 20
	failed := 0
	for range connections {
		cert, _, err := tlsThroughProxy(ports[1], "console.apps.failover."+baseDomain)
		if err != nil || !cert.Equal(r.cert) {
			failed++
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d connections through the proxy failed with one of two addresses unreachable\n%s", failed, connections, p.Logs())
	}
}
