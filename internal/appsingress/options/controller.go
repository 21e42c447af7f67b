package options

import (
	"fmt"
	"net/netip"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/proxy"
)

// addresses are the options' address lists, parsed.
type addresses struct {
	proxyIPs               []netip.Addr
	dnsStatic, proxyStatic []netip.AddrPort
}

// Validate fails on options the operator cannot run with, naming the flag.
func (o Options) Validate() error {
	_, err := o.addresses()
	return err
}

func (o Options) addresses() (addresses, error) {
	var a addresses
	if o.Namespace == "" {
		return a, fmt.Errorf("--namespace is required when POD_NAMESPACE is not set")
	}
	if o.DNSVLANPort != 0 && len(o.DNSVLANBind) == 0 {
		return a, fmt.Errorf("--dns-vlan-port needs --dns-vlan-bind: a second listener on every address would take the port from the node's other DNS servers")
	}
	if o.DNSRepairAfter <= 0 {
		return a, fmt.Errorf("--dns-repair-after must be positive")
	}
	if o.DNSZoneReloadInterval <= 0 {
		return a, fmt.Errorf("--dns-zone-reload-interval must be positive: zero would stop CoreDNS from ever re-reading a zone")
	}
	var err error
	if a.proxyIPs, err = parseEach(o.ProxyIPs, netip.ParseAddr); err != nil {
		return a, fmt.Errorf("--proxy-ips: %w", err)
	}
	if len(a.proxyIPs) == 0 && o.ProxyService == "" {
		return a, fmt.Errorf("one of --proxy-ips or --proxy-service is required: the pod-network DNS view answers with the proxy's address")
	}
	if a.dnsStatic, err = parseEach(o.DNSReplicas, netip.ParseAddrPort); err != nil {
		return a, fmt.Errorf("--dns-replicas: %w", err)
	}
	if a.proxyStatic, err = parseEach(o.ProxyReplicas, netip.ParseAddrPort); err != nil {
		return a, fmt.Errorf("--proxy-replicas: %w", err)
	}
	if (o.DNSService == "" && len(a.dnsStatic) == 0) || (o.ProxyService == "" && len(a.proxyStatic) == 0) {
		return a, fmt.Errorf("CoreDNS and HAProxy are asked what they serve: give --dns-service or --dns-replicas, and --proxy-service or --proxy-replicas")
	}
	return a, nil
}

// Controller is what the options ask of the controller; reader (the manager's cache) lists the Services' endpoints
// when no static replicas are given.
func (o Options) Controller(reader client.Reader) (controller.Options, error) {
	a, err := o.addresses()
	if err != nil {
		return controller.Options{}, err
	}
	in := func(name string) types.NamespacedName {
		return types.NamespacedName{Namespace: o.Namespace, Name: name}
	}
	return controller.Options{
		DNSConfigMap:   in(o.DNSConfigMap),
		ProxyConfigMap: in(o.ProxyConfigMap),
		ConfigShards:   o.ConfigShards,
		DNS: dns.Options{
			Port: o.DNSPort, VLANPort: o.DNSVLANPort, VLANBind: o.DNSVLANBind, ProxyIPs: a.proxyIPs, Upstreams: o.DNSUpstreams,
			HealthAddr: o.DNSHealthAddr, ReadyAddr: o.DNSReadyAddr,
			ZoneDir: o.DNSZoneDir, ZoneReloadInterval: o.DNSZoneReloadInterval.String(),
		},
		Proxy: proxy.Options{
			HTTPPort: o.ProxyHTTPPort, HTTPSPort: o.ProxyHTTPSPort, APIPort: o.ProxyAPIPort,
			StatusPort: o.ProxyStatusPort, StateDir: o.ProxyStateDir,
		},
		ProxyService:            in(o.ProxyService),
		DNSReplicas:             replicas(reader, a.dnsStatic, in(o.DNSService), "dns"),
		ProxyReplicas:           replicas(reader, a.proxyStatic, in(o.ProxyService), "status"),
		RecheckInterval:         o.RecheckInterval,
		DNSRepairAfter:          o.DNSRepairAfter,
		ControlPlaneService:     o.ControlPlaneService,
		ControlPlanePort:        o.ControlPlanePort,
		ClusterDomain:           o.ClusterDomain,
		HostedClusterTimeout:    o.HostedClusterTimeout,
		CleanupTimeout:          o.CleanupTimeout,
		BackoffBase:             o.BackoffBase,
		BackoffMax:              o.BackoffMax,
		MaxConcurrentReconciles: o.MaxConcurrentReconciles,
	}, nil
}

// replicas are the static addresses when given, else the Service's endpoints at its port named port.
func replicas(reader client.Reader, static []netip.AddrPort, svc types.NamespacedName, port string) controller.Replicas {
	if len(static) > 0 {
		return controller.StaticReplicas(static)
	}
	return controller.ServiceReplicas{Reader: reader, Service: svc, Port: port}
}

// parseEach parses every flag value of a list with parse.
func parseEach[T any](ss []string, parse func(string) (T, error)) ([]T, error) {
	out := make([]T, 0, len(ss))
	for _, s := range ss {
		v, err := parse(s)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
