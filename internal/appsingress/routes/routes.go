// Package routes is what the DNS and proxy renderers need to know about one hosted cluster, independent of the
// API types: the names it answers to and the addresses behind them.
package routes

import (
	"net/netip"
	"slices"
	"strings"
)

// Cluster is one hosted cluster's entry in the shared DNS and proxy configuration.
type Cluster struct {
	// Key identifies the entry (the AppsIngress's namespace/name); renders are ordered by it and name their
	// sections after it.
	Key string
	// Name is <cluster> and BaseDomain <baseDomain> in *.apps.<cluster>.<baseDomain>.
	Name, BaseDomain string
	// ExternalIPs are the hosted cluster Service's load-balancer addresses (IPv4 and/or IPv6).
	ExternalIPs []netip.Addr
	// HTTPPort and HTTPSPort are the Service's ports at ExternalIPs.
	HTTPPort, HTTPSPort int32
	// VLANCIDRs are the client networks that get ExternalIPs instead of the proxy's address.
	VLANCIDRs []netip.Prefix
	// APIEndpoint is host:port of the hosted cluster's API server as published; empty means no api route.
	APIEndpoint string
	// APIBackend is host:port the proxy connects to for the API; empty means APIEndpoint.
	APIBackend string
}

// APIBackendAddr is where the proxy connects for the API: APIBackend, else APIEndpoint.
func (c Cluster) APIBackendAddr() string {
	if c.APIBackend != "" {
		return c.APIBackend
	}
	return c.APIEndpoint
}

// AppsDomain is apps.<cluster>.<baseDomain>, the parent of the wildcard.
func (c Cluster) AppsDomain() string { return "apps." + c.Name + "." + c.BaseDomain }

// APIName is api.<cluster>.<baseDomain>.
func (c Cluster) APIName() string { return "api." + c.Name + "." + c.BaseDomain }

// Sorted returns the clusters ordered by Key, so that a render depends on the set and not on the order found.
func Sorted(clusters []Cluster) []Cluster {
	out := slices.Clone(clusters)
	slices.SortFunc(out, func(a, b Cluster) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Split returns the IPv4 and the IPv6 addresses of addrs, in order.
func Split(addrs []netip.Addr) (v4, v6 []netip.Addr) {
	for _, a := range addrs {
		if a.Unmap().Is4() {
			v4 = append(v4, a.Unmap())
		} else {
			v6 = append(v6, a)
		}
	}
	return v4, v6
}

// SafeName turns a Key into a name made of letters, digits, '_', '-' and '.', for config section names.
func SafeName(key string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			return r
		default:
			return '_'
		}
	}, key)
}
