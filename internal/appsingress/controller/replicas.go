package controller

import (
	"context"
	"fmt"
	"net/netip"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Replicas lists where each serving replica of CoreDNS or HAProxy can be asked what it has loaded.
type Replicas interface {
	Addresses(ctx context.Context) ([]netip.AddrPort, error)
}

// ServiceReplicas are the ready endpoints of a Service, at its port named Port: every Pod the Service sends clients
// to, whether on the pod network or the node's (hostNetwork).
type ServiceReplicas struct {
	Reader  client.Reader
	Service types.NamespacedName
	Port    string
}

// Addresses lists the ready endpoints' addresses with the port's number.
func (s ServiceReplicas) Addresses(ctx context.Context) ([]netip.AddrPort, error) {
	var slices discoveryv1.EndpointSliceList
	if err := s.Reader.List(ctx, &slices, client.InNamespace(s.Service.Namespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: s.Service.Name}); err != nil {
		return nil, fmt.Errorf("listing the endpoints of Service %s: %w", s.Service, err)
	}
	var out []netip.AddrPort
	seen := map[netip.AddrPort]bool{}
	for _, es := range slices.Items {
		var port int32
		for _, p := range es.Ports {
			if p.Name != nil && *p.Name == s.Port && p.Port != nil {
				port = *p.Port
			}
		}
		if port == 0 {
			continue
		}
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				ip, err := netip.ParseAddr(a)
				if err != nil {
					continue
				}
				ap := netip.AddrPortFrom(ip, uint16(port))
				if !seen[ap] {
					seen[ap] = true
					out = append(out, ap)
				}
			}
		}
	}
	return out, nil
}

// StaticReplicas are fixed addresses, for CoreDNS and HAProxy run outside a cluster.
type StaticReplicas []netip.AddrPort

// Addresses returns s.
func (s StaticReplicas) Addresses(context.Context) ([]netip.AddrPort, error) { return s, nil }
