// Package options holds the apps-ingress-operator binary's options: its command-line flags, owned here so that the
// tests parse the chart's rendered arguments with the very flags the binary has, and what they turn into.
package options

import (
	"flag"
	"os"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/platform/flagvalue"
	"github.com/virtual-ingress/virtual-ingress/internal/platform/managerflags"
)

// Options are the operator's flags' values.
type Options struct {
	Manager managerflags.Flags
	// Namespace holds the operator's ConfigMaps, the CoreDNS and HAProxy Services and the leader election Lease.
	Namespace                     string
	DNSConfigMap, ProxyConfigMap  string
	ConfigShards                  int
	ProxyService, DNSService      string
	DNSReplicas, ProxyReplicas    []string
	ProxyStatusPort               int
	ProxyStateDir                 string
	ControlPlaneService           string
	ControlPlanePort              int
	ClusterDomain                 string
	RecheckInterval               time.Duration
	ProxyIPs, DNSUpstreams        []string
	SecretNamespaces              []string
	DNSVLANPort                   int
	DNSVLANBind                   []string
	DNSPort                       int
	DNSZoneDir                    string
	DNSZoneReloadInterval         time.Duration
	DNSRepairAfter                time.Duration
	DNSHealthAddr, DNSReadyAddr   string
	ProxyHTTPPort, ProxyHTTPSPort int
	ProxyAPIPort                  int
	HostedClusterTimeout          time.Duration
	CleanupTimeout                time.Duration
	BackoffBase, BackoffMax       time.Duration
	LeaderElectionID              string
	MaxConcurrentReconciles       int
}

// BindFlags registers every flag of the operator (the shared manager flags included) on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the operator's namespace: its ConfigMaps, the proxy Service and the leader election Lease (default: $POD_NAMESPACE)")
	fs.StringVar(&o.DNSConfigMap, "dns-config-map", "apps-ingress-dns", "ConfigMap receiving the CoreDNS Corefile (the clusters' files go to its shards, <name>-<i>)")
	fs.StringVar(&o.ProxyConfigMap, "proxy-config-map", "apps-ingress-proxy", "ConfigMap receiving haproxy.cfg (the clusters' files go to its shards, <name>-<i>)")
	fs.IntVar(&o.ConfigShards, "config-shards", 1, "how many shard ConfigMaps each server's per-cluster files are split into (each holds at most 1 MiB); the servers' sidecars must read as many (sync-files --shards)")
	fs.StringVar(&o.ProxyService, "proxy-service", "", "Service of the proxy: its cluster IPs are the pod-network DNS view's answer (unless --proxy-ips), and each of its endpoints is asked which configuration it serves (port \"status\")")
	fs.StringVar(&o.DNSService, "dns-service", "", "Service of CoreDNS: each of its endpoints is asked for the published records (port \"dns\")")
	fs.Func("dns-replicas", "addresses (host:port, comma-separated) of CoreDNS servers run outside the cluster, asked instead of --dns-service's endpoints", flagvalue.CommaList(&o.DNSReplicas))
	fs.Func("proxy-replicas", "addresses (host:port, comma-separated) of HAProxy status frontends run outside the cluster, asked instead of --proxy-service's endpoints", flagvalue.CommaList(&o.ProxyReplicas))
	fs.IntVar(&o.ProxyStatusPort, "proxy-status-port", 8404, "HAProxy's status frontend port (which configuration it loaded)")
	fs.StringVar(&o.ProxyStateDir, "proxy-state-dir", "/tmp/haproxy", "the HAProxy reloader's directory (STATE_DIR), where it reports a refused configuration")
	fs.StringVar(&o.ControlPlaneService, "control-plane-service", "kube-apiserver", "the hosted API server's Service in each hosted control plane namespace (<namespace>-<name> of the HostedCluster), used instead of the published endpoint when it exists; empty: never")
	fs.IntVar(&o.ControlPlanePort, "control-plane-service-port", 6443, "that Service's port")
	fs.StringVar(&o.ClusterDomain, "cluster-domain", "cluster.local", "the management cluster's DNS domain (the Service's name is <service>.<namespace>.svc.<domain>)")
	fs.DurationVar(&o.RecheckInterval, "recheck-interval", time.Minute, "how often a Ready AppsIngress is checked again without any event")
	fs.DurationVar(&o.DNSRepairAfter, "dns-repair-after", 30*time.Second, "how long a CoreDNS replica may run one configuration (the generation it answers) without serving an entry written before every replica is asked to reload it (at most once per this period); keep it above the time files take to reach CoreDNS (the kubelet's sync period without the chart's config-sync sidecar)")
	fs.Func("proxy-ips", "addresses the pod-network DNS view answers for *.apps and api names (comma-separated); default: --proxy-service's cluster IPs", flagvalue.CommaList(&o.ProxyIPs))
	fs.Func("dns-upstreams", "where CoreDNS forwards every other name (comma-separated, forward plugin syntax); none answers REFUSED", flagvalue.CommaList(&o.DNSUpstreams))
	fs.Func("secret-namespaces", "namespaces whose Secrets (HostedCluster kubeconfigs) the operator may read (comma-separated); empty: all", flagvalue.CommaList(&o.SecretNamespaces))
	fs.IntVar(&o.DNSVLANPort, "dns-vlan-port", 0, "a second port CoreDNS serves the same records on, limited to --dns-vlan-bind (CoreDNS on a node's network answering VLAN clients on 53); 0: none")
	fs.Func("dns-vlan-bind", "addresses or interface names of --dns-vlan-port (comma-separated)", flagvalue.CommaList(&o.DNSVLANBind))
	fs.IntVar(&o.DNSPort, "dns-port", 5353, "port CoreDNS listens on (the Service maps 53 to it)")
	fs.StringVar(&o.DNSZoneDir, "dns-zone-dir", "/etc/coredns", "where the CoreDNS container mounts the DNS ConfigMap (the Corefile names its zone files there)")
	fs.DurationVar(&o.DNSZoneReloadInterval, "dns-zone-reload-interval", 500*time.Millisecond, "how often CoreDNS checks a VLAN zone file for a new serial (file plugin reload)")
	fs.StringVar(&o.DNSHealthAddr, "dns-health-address", ":8053", "CoreDNS health plugin address (liveness); empty: none")
	fs.StringVar(&o.DNSReadyAddr, "dns-ready-address", ":8181", "CoreDNS ready plugin address (readiness); empty: none")
	fs.IntVar(&o.ProxyHTTPPort, "proxy-http-port", 8080, "HAProxy's HTTP listening port")
	fs.IntVar(&o.ProxyHTTPSPort, "proxy-https-port", 8443, "HAProxy's TLS (SNI passthrough) listening port")
	fs.IntVar(&o.ProxyAPIPort, "proxy-api-port", 6443, "HAProxy's API server (SNI passthrough) listening port")
	fs.DurationVar(&o.HostedClusterTimeout, "hosted-cluster-timeout", 10*time.Second, "timeout of each request to a hosted cluster")
	fs.DurationVar(&o.CleanupTimeout, "cleanup-timeout", 2*time.Minute, "how long a deleted AppsIngress keeps trying to delete its hosted Service")
	fs.DurationVar(&o.BackoffBase, "backoff-base", time.Second, "first retry delay of a failing AppsIngress, doubled on each failure")
	fs.DurationVar(&o.BackoffMax, "backoff-max", 5*time.Minute, "longest retry delay")
	// A fleet created at once costs the management API server about ten requests per AppsIngress (finalizer,
	// status writes, Events, the shared ConfigMaps); at 50 per second the client's own limit, not the server, was
	// what 200 clusters waited for (bench, 64 workers: 1.9-2.0x the floor at 50/s, 1.5-1.9x at 200/s).
	o.Manager.Register(fs, 200, 400)
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", "apps-ingress-operator", "name of the leader election Lease")
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", 64, "AppsIngresses reconciled in parallel (most of a reconcile waits: on a hosted cluster, a server, or the render that writes its entry together with others)")
}
