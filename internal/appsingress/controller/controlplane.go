package controller

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
)

// controlPlane finds a hosted cluster's API server inside the management cluster: HyperShift runs it behind a
// Service in the hosted control plane namespace (<namespace>-<name> of the HostedCluster). Reached there, it needs
// neither the published name — which may be the api name this operator's own CoreDNS answers with the proxy — nor a
// load balancer in between.
type controlPlane struct {
	// service is the Service's name ("" disables the lookup), port its port, clusterDomain the cluster's DNS domain.
	service       string
	port          int
	clusterDomain string
	lookupHost    func(ctx context.Context, host string) ([]string, error)
}

// backend is host:port of the hosted cluster's control plane Service when it exists (its name resolves), else "".
func (c controlPlane) backend(ctx context.Context, hc types.NamespacedName) string {
	if c.service == "" {
		return ""
	}
	host := fmt.Sprintf("%s.%s-%s.svc.%s", c.service, hc.Namespace, hc.Name, c.clusterDomain)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if addrs, err := c.lookupHost(ctx, host+"."); err != nil || len(addrs) == 0 {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(c.port))
}

// throughService rewrites the kubeconfig's server to hostPort, keeping the host it named as the TLS server name
// (unless the kubeconfig sets one): the certificate is still checked against the name it was issued for.
func throughService(kubeconfig []byte, hostPort string) ([]byte, error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("parsing kubeconfig: %w", err)
	}
	kctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return nil, fmt.Errorf("kubeconfig: no current context %q", cfg.CurrentContext)
	}
	cluster, ok := cfg.Clusters[kctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("kubeconfig: no cluster %q", kctx.Cluster)
	}
	u, err := url.Parse(cluster.Server)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("kubeconfig: server %q is no URL", cluster.Server)
	}
	if cluster.TLSServerName == "" {
		cluster.TLSServerName = u.Hostname()
	}
	u.Host = hostPort
	cluster.Server = u.String()
	return clientcmd.Write(*cfg)
}
