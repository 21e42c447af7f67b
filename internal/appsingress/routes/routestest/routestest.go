// Package routestest holds clusters and a dump for the tests of the renderers and the operator: test data that the
// operator binary does not carry.
package routestest

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
)

// Examples are two clusters (one dual-stack with VLANs and an API endpoint, one IPv4-only without) for the
// renderers' golden tests and the documentation.
func Examples() []routes.Cluster {
	return []routes.Cluster{
		{
			Key: "clusters/prod", Name: "prod", BaseDomain: "example.com",
			ExternalIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")},
			HTTPPort:    80, HTTPSPort: 443,
			VLANCIDRs:   []netip.Prefix{netip.MustParsePrefix("10.10.0.0/16"), netip.MustParsePrefix("fd00:10::/64")},
			APIEndpoint: "api.prod.example.com:6443",
		},
		{
			Key: "clusters/dev", Name: "dev", BaseDomain: "lab.example.org",
			ExternalIPs: []netip.Addr{netip.MustParseAddr("192.0.2.20")},
			HTTPPort:    8080, HTTPSPort: 8443,
		},
	}
}

// Dump is files as one text, file by file in name order, for golden tests and test failures.
func Dump(files map[string]string) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(&b, "==> %s <==\n%s", name, files[name])
	}
	return b.String()
}

// Fleet is n IPv4 clusters, each with a VLAN and an API endpoint, for tests of the renders at scale. Their addresses
// are in 10.0.0.0/8, which no test sends traffic to.
func Fleet(n int) []routes.Cluster {
	out := make([]routes.Cluster, n)
	for i := range out {
		name := fmt.Sprintf("cluster-%04d", i)
		out[i] = routes.Cluster{
			Key: "clusters-" + name + "/apps", Name: name, BaseDomain: "fleet.example.com",
			ExternalIPs: []netip.Addr{netip.AddrFrom4([4]byte{10, 20, byte(i / 250), byte(i % 250)})}, HTTPPort: 80, HTTPSPort: 443,
			VLANCIDRs: []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(100 + i/250), byte(i % 250), 0}), 24)},
			// An address, not a name: haproxy -c would resolve a name through the machine's resolver.
			APIEndpoint: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 30, byte(i / 250), byte(i % 250)}), 6443).String(),
		}
	}
	return out
}
