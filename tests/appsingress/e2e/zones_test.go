//go:build e2e

package e2e_test

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/coredns"
)

// TestDualStackZoneServedAndReloadedByCoreDNS runs a CoreDNS of its own on the renderer's files for a dual-stack
// cluster: VLAN clients get both families from the zone file, pod-network clients the proxy's address, and an IP
// change (a zone file rewrite, the Corefile untouched, so only the file plugin's reload can apply it) is answered.
func TestDualStackZoneServedAndReloadedByCoreDNS(t *testing.T) {
	port, err := localproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "coredns")
	opts := dns.Options{Port: port, ProxyIPs: []netip.Addr{netip.MustParseAddr(proxyIP)}, ZoneDir: dir, ZoneReloadInterval: "200ms"}
	cluster := routes.Cluster{
		Key: "clusters/ds", Name: "ds", BaseDomain: "example.com", HTTPPort: 80, HTTPSPort: 443,
		ExternalIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")},
		VLANCIDRs:   []netip.Prefix{netip.MustParsePrefix("127.0.1.0/24"), netip.MustParsePrefix("::1/128")},
	}
	addr := net.JoinHostPort(proxyIP, strconv.Itoa(port))
	server, err := coredns.Start(t.Context(), dir, dns.Render(opts, []routes.Cluster{cluster}).All(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Stop() })
	const name = "console-openshift-console.apps.ds.example.com"
	expect := func(src string, qtype dnsmessage.Type, want ...string) {
		t.Helper()
		rcode, got := lookupAt(t, server, addr, src, name, qtype)
		if rcode != dnsmessage.RCodeSuccess || !slices.Equal(addrStrings(got), want) {
			t.Fatalf("%v %s from %s: %v %v, want %v\n%s", qtype, name, src, rcode, got, want, server.Files())
		}
	}
	expect(vlanClient, dnsmessage.TypeA, "192.0.2.10")
	expect(vlanClient, dnsmessage.TypeAAAA, "2001:db8::10")
	expect(podClient, dnsmessage.TypeA, proxyIP)
	// The apex itself is no application: NODATA.
	if rcode, got := lookupAt(t, server, addr, vlanClient, "apps.ds.example.com", dnsmessage.TypeA); rcode != dnsmessage.RCodeSuccess || len(got) != 0 {
		t.Fatalf("the apex answered %v %v, want NODATA", rcode, got)
	}

	cluster.ExternalIPs = []netip.Addr{netip.MustParseAddr("192.0.2.11"), netip.MustParseAddr("2001:db8::11")}
	files := dns.Render(opts, []routes.Cluster{cluster}).All()
	changed := time.Now()
	if err := server.Update(files); err != nil {
		t.Fatal(err)
	}
	// Every 20 ms: this times the change.
	err = poll.WaitEvery(t.Context(), 5*time.Second, 20*time.Millisecond, "the new addresses served after the zone file changed",
		func() (bool, string, error) {
			_, a := lookupAt(t, server, addr, vlanClient, name, dnsmessage.TypeA)
			_, aaaa := lookupAt(t, server, addr, vlanClient, name, dnsmessage.TypeAAAA)
			return slices.Equal(addrStrings(a), []string{"192.0.2.11"}) && slices.Equal(addrStrings(aaaa), []string{"2001:db8::11"}),
				fmt.Sprintf("A %v, AAAA %v", a, aaaa), nil
		})
	if err != nil {
		t.Fatalf("%v\n%s", err, server.Files())
	}
	t.Logf("IP change answered %s after the zone file changed", time.Since(changed).Round(time.Millisecond))
}

// TestForwardingLoopStopsCoreDNS: with upstreams that lead back to itself, the rendered CoreDNS stops at once and
// says why, instead of sending every other name of the domain round until it times out.
func TestForwardingLoopStopsCoreDNS(t *testing.T) {
	port, err := localproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(proxyIP, strconv.Itoa(port))
	dir := filepath.Join(t.TempDir(), "coredns")
	opts := dns.Options{Port: port, ProxyIPs: []netip.Addr{netip.MustParseAddr(proxyIP)}, ZoneDir: dir, Upstreams: []string{addr}}
	server, err := coredns.Start(t.Context(), dir, dns.Render(opts, nil).All(), addr)
	if server != nil {
		t.Cleanup(func() { _ = server.Stop() })
	}
	if err == nil {
		if err := poll.Wait(t.Context(), 20*time.Second, "CoreDNS forwarding to itself stopped", func() (bool, string, error) {
			return server.Exited(), "still runs", nil
		}); err != nil {
			t.Fatalf("%v\n%s", err, server.Logs())
		}
		err = errors.New(server.Logs())
	}
	if !strings.Contains(err.Error(), "Loop") || !strings.Contains(err.Error(), "detected") {
		t.Fatalf("CoreDNS forwarding to itself did not report the loop: %v", err)
	}
}
