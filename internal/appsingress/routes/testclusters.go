package routes

import "net/netip"

// Examples are two clusters (one dual-stack with VLANs and an API endpoint, one IPv4-only without) for the
// renderers' golden tests and the documentation.
func Examples() []Cluster {
	return []Cluster{
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
