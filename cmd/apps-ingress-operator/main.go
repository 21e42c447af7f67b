// Command apps-ingress-operator reconciles AppsIngress objects: for each hosted cluster a LoadBalancer Service in
// that cluster (through its HostedCluster's kubeconfig), and its entries in the CoreDNS and HAProxy ConfigMaps that
// give *.apps.<cluster>.<baseDomain> and api.<cluster>.<baseDomain> split-horizon DNS and TLS-passthrough routes.
package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/proxy"
	"github.com/virtual-ingress/virtual-ingress/internal/platform/managerflags"
)

type flags struct {
	manager                                    managerflags.Flags
	namespace                                  string
	dnsConfigMap, proxyConfigMap, proxyService string
	configShards                               int
	dnsService, proxyStateDir                  string
	proxyStatusPort                            int
	recheckInterval                            time.Duration
	controlPlaneService, clusterDomain         string
	controlPlanePort                           int
	proxyIPs, dnsUpstreams, secretNamespaces   list
	dnsVLANBind, dnsReplicas, proxyReplicas    list
	dnsVLANPort                                int
	dnsPort                                    int
	dnsHealthAddr, dnsReadyAddr, dnsZoneDir    string
	dnsZoneReload                              time.Duration
	proxyHTTPPort, proxyHTTPSPort, proxyAPI    int
	hostedTimeout, cleanupTimeout              time.Duration
	backoffBase, backoffMax                    time.Duration
	leaderElectionID                           string
	maxConcurrentReconciles                    int
}

// list is a comma-separated flag value.
type list []string

func (l *list) String() string { return strings.Join(*l, ",") }
func (l *list) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

func parseFlags() flags {
	var f flags
	flag.StringVar(&f.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the operator's namespace: its ConfigMaps, the proxy Service and the leader election Lease (default: $POD_NAMESPACE)")
	flag.StringVar(&f.dnsConfigMap, "dns-config-map", "apps-ingress-dns", "ConfigMap receiving the CoreDNS Corefile (the clusters' files go to its shards, <name>-<i>)")
	flag.StringVar(&f.proxyConfigMap, "proxy-config-map", "apps-ingress-proxy", "ConfigMap receiving haproxy.cfg (the clusters' files go to its shards, <name>-<i>)")
	flag.IntVar(&f.configShards, "config-shards", 1, "how many shard ConfigMaps each server's per-cluster files are split into (each holds at most 1 MiB); the servers' sidecars must read as many (sync-files --shards)")
	flag.StringVar(&f.proxyService, "proxy-service", "", "Service of the proxy: its cluster IPs are the pod-network DNS view's answer (unless --proxy-ips), and each of its endpoints is asked which configuration it serves (port \"status\")")
	flag.StringVar(&f.dnsService, "dns-service", "", "Service of CoreDNS: each of its endpoints is asked for the published records (port \"dns\")")
	flag.Var(&f.dnsReplicas, "dns-replicas", "addresses (host:port, comma-separated) of CoreDNS servers run outside the cluster, asked instead of --dns-service's endpoints")
	flag.Var(&f.proxyReplicas, "proxy-replicas", "addresses (host:port, comma-separated) of HAProxy status frontends run outside the cluster, asked instead of --proxy-service's endpoints")
	flag.IntVar(&f.proxyStatusPort, "proxy-status-port", 8404, "HAProxy's status frontend port (which configuration it loaded)")
	flag.StringVar(&f.proxyStateDir, "proxy-state-dir", "/tmp/haproxy", "the HAProxy reloader's directory (STATE_DIR), where it reports a refused configuration")
	flag.StringVar(&f.controlPlaneService, "control-plane-service", "kube-apiserver", "the hosted API server's Service in each hosted control plane namespace (<namespace>-<name> of the HostedCluster), used instead of the published endpoint when it exists; empty: never")
	flag.IntVar(&f.controlPlanePort, "control-plane-service-port", 6443, "that Service's port")
	flag.StringVar(&f.clusterDomain, "cluster-domain", "cluster.local", "the management cluster's DNS domain (the Service's name is <service>.<namespace>.svc.<domain>)")
	flag.DurationVar(&f.recheckInterval, "recheck-interval", time.Minute, "how often a Ready AppsIngress is checked again without any event")
	flag.Var(&f.proxyIPs, "proxy-ips", "addresses the pod-network DNS view answers for *.apps and api names (comma-separated); default: --proxy-service's cluster IPs")
	flag.Var(&f.dnsUpstreams, "dns-upstreams", "where CoreDNS forwards every other name (comma-separated, forward plugin syntax); none answers REFUSED")
	flag.Var(&f.secretNamespaces, "secret-namespaces", "namespaces whose Secrets (HostedCluster kubeconfigs) the operator may read (comma-separated); empty: all")
	flag.IntVar(&f.dnsVLANPort, "dns-vlan-port", 0, "a second port CoreDNS serves the same records on, limited to --dns-vlan-bind (CoreDNS on a node's network answering VLAN clients on 53); 0: none")
	flag.Var(&f.dnsVLANBind, "dns-vlan-bind", "addresses or interface names of --dns-vlan-port (comma-separated)")
	flag.IntVar(&f.dnsPort, "dns-port", 5353, "port CoreDNS listens on (the Service maps 53 to it)")
	flag.StringVar(&f.dnsZoneDir, "dns-zone-dir", "/etc/coredns", "where the CoreDNS container mounts the DNS ConfigMap (the Corefile names its zone files there)")
	flag.DurationVar(&f.dnsZoneReload, "dns-zone-reload-interval", 500*time.Millisecond, "how often CoreDNS checks a VLAN zone file for a new serial (file plugin reload)")
	flag.StringVar(&f.dnsHealthAddr, "dns-health-address", ":8053", "CoreDNS health plugin address (liveness); empty: none")
	flag.StringVar(&f.dnsReadyAddr, "dns-ready-address", ":8181", "CoreDNS ready plugin address (readiness); empty: none")
	flag.IntVar(&f.proxyHTTPPort, "proxy-http-port", 8080, "HAProxy's HTTP listening port")
	flag.IntVar(&f.proxyHTTPSPort, "proxy-https-port", 8443, "HAProxy's TLS (SNI passthrough) listening port")
	flag.IntVar(&f.proxyAPI, "proxy-api-port", 6443, "HAProxy's API server (SNI passthrough) listening port")
	flag.DurationVar(&f.hostedTimeout, "hosted-cluster-timeout", 10*time.Second, "timeout of each request to a hosted cluster")
	flag.DurationVar(&f.cleanupTimeout, "cleanup-timeout", 2*time.Minute, "how long a deleted AppsIngress keeps trying to delete its hosted Service")
	flag.DurationVar(&f.backoffBase, "backoff-base", time.Second, "first retry delay of a failing AppsIngress, doubled on each failure")
	flag.DurationVar(&f.backoffMax, "backoff-max", 5*time.Minute, "longest retry delay")
	f.manager.Register(flag.CommandLine, 50, 100)
	flag.StringVar(&f.leaderElectionID, "leader-election-id", "apps-ingress-operator", "name of the leader election Lease")
	flag.IntVar(&f.maxConcurrentReconciles, "max-concurrent-reconciles", 16, "AppsIngresses reconciled in parallel (most of a reconcile waits on a hosted cluster or a server)")
	flag.Parse()
	return f
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "sync-files" {
		if err := syncFiles(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "apps-ingress-operator:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(parseFlags()); err != nil {
		fmt.Fprintln(os.Stderr, "apps-ingress-operator:", err)
		os.Exit(1)
	}
}

func run(f flags) error {
	if err := f.manager.SetupLogger(); err != nil {
		return err
	}
	if f.namespace == "" {
		return fmt.Errorf("--namespace is required when POD_NAMESPACE is not set")
	}
	if f.dnsVLANPort != 0 && len(f.dnsVLANBind) == 0 {
		return fmt.Errorf("--dns-vlan-port needs --dns-vlan-bind: a second listener on every address would take the port from the node's other DNS servers")
	}
	if f.dnsZoneReload <= 0 {
		return fmt.Errorf("--dns-zone-reload-interval must be positive: zero would stop CoreDNS from ever re-reading a zone")
	}
	proxyIPs, err := controller.ParseAddrs(f.proxyIPs)
	if err != nil {
		return fmt.Errorf("--proxy-ips: %w", err)
	}
	if len(proxyIPs) == 0 && f.proxyService == "" {
		return fmt.Errorf("one of --proxy-ips or --proxy-service is required: the pod-network DNS view answers with the proxy's address")
	}
	dnsStatic, err := parseAddrPorts(f.dnsReplicas)
	if err != nil {
		return fmt.Errorf("--dns-replicas: %w", err)
	}
	proxyStatic, err := parseAddrPorts(f.proxyReplicas)
	if err != nil {
		return fmt.Errorf("--proxy-replicas: %w", err)
	}
	if (f.dnsService == "" && len(dnsStatic) == 0) || (f.proxyService == "" && len(proxyStatic) == 0) {
		return fmt.Errorf("CoreDNS and HAProxy are asked what they serve: give --dns-service or --dns-replicas, and --proxy-service or --proxy-replicas")
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	cfg, err := f.manager.RESTConfig("apps-ingress-operator")
	if err != nil {
		return err
	}
	opts := f.manager.ManagerOptions(f.leaderElectionID, f.namespace)
	opts.Scheme = scheme
	opts.Cache = controller.CacheOptions(f.namespace, f.secretNamespaces)
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	if _, err := controller.Setup(mgr, controller.Options{
		DNSConfigMap:   types.NamespacedName{Namespace: f.namespace, Name: f.dnsConfigMap},
		ProxyConfigMap: types.NamespacedName{Namespace: f.namespace, Name: f.proxyConfigMap},
		ConfigShards:   f.configShards,
		DNS: dns.Options{
			Port: f.dnsPort, VLANPort: f.dnsVLANPort, VLANBind: f.dnsVLANBind, ProxyIPs: proxyIPs, Upstreams: f.dnsUpstreams,
			HealthAddr: f.dnsHealthAddr, ReadyAddr: f.dnsReadyAddr,
			ZoneDir: f.dnsZoneDir, ZoneReloadInterval: f.dnsZoneReload.String(),
		},
		Proxy: proxy.Options{
			HTTPPort: f.proxyHTTPPort, HTTPSPort: f.proxyHTTPSPort, APIPort: f.proxyAPI,
			StatusPort: f.proxyStatusPort, StateDir: f.proxyStateDir,
		},
		ProxyService:            types.NamespacedName{Namespace: f.namespace, Name: f.proxyService},
		DNSReplicas:             replicas(mgr, dnsStatic, types.NamespacedName{Namespace: f.namespace, Name: f.dnsService}, "dns"),
		ProxyReplicas:           replicas(mgr, proxyStatic, types.NamespacedName{Namespace: f.namespace, Name: f.proxyService}, "status"),
		RecheckInterval:         f.recheckInterval,
		ControlPlaneService:     f.controlPlaneService,
		ControlPlanePort:        f.controlPlanePort,
		ClusterDomain:           f.clusterDomain,
		HostedClusterTimeout:    f.hostedTimeout,
		CleanupTimeout:          f.cleanupTimeout,
		BackoffBase:             f.backoffBase,
		BackoffMax:              f.backoffMax,
		MaxConcurrentReconciles: f.maxConcurrentReconciles,
	}); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// replicas are the static addresses when given, else the Service's endpoints at its port named port.
func replicas(mgr ctrl.Manager, static []netip.AddrPort, svc types.NamespacedName, port string) controller.Replicas {
	if len(static) > 0 {
		return controller.StaticReplicas(static)
	}
	return controller.ServiceReplicas{Reader: mgr.GetCache(), Service: svc, Port: port}
}

func parseAddrPorts(ss []string) ([]netip.AddrPort, error) {
	out := make([]netip.AddrPort, 0, len(ss))
	for _, s := range ss {
		a, err := netip.ParseAddrPort(s)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
