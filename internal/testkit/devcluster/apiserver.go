package devcluster

import (
	"context"
	"fmt"
	"net"
	"time"
)

// serviceCIDR is --service-cluster-ip-range, routed to the node when there is one (kube-proxy's rules are there).
const serviceCIDR = "10.96.0.0/16"

// apiserverHost is the address the API server serves on: loopback, or with a node the host's end of the node's link,
// because the API server publishes it as the `kubernetes` Service's endpoint and refuses a loopback one there.
func (c *Cluster) apiserverHost() string {
	switch {
	case c.opts.APIServerAddress != "":
		return c.opts.APIServerAddress
	case c.opts.WithNode:
		return HostIP
	}
	return "127.0.0.1"
}

func (c *Cluster) apiserverIPs() []net.IP {
	if h := c.apiserverHost(); h != "127.0.0.1" {
		return []net.IP{net.ParseIP(h)}
	}
	return nil
}

func (c *Cluster) apiserverProcess() (*process, error) {
	p := &process{
		name:    ComponentAPIServer,
		bin:     c.bins[binAPIServer.file],
		dataDir: c.dir,
		// With clients still connected a graceful shutdown takes up to the request timeout (60 s was seen),
		// and an API server keeps no state of its own: everything is in etcd. A short grace keeps a restart
		// within the 10 s in which Kyverno's controllers must renew their leader leases.
		stopGrace: 2 * time.Second,
		args: []string{
			fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", c.ports.etcdClient),
			fmt.Sprintf("--secure-port=%d", c.ports.apiserver),
			"--bind-address=" + c.apiserverHost(),
			"--advertise-address=" + c.apiserverHost(),
			"--tls-cert-file=" + c.pki.servingCert,
			"--tls-private-key-file=" + c.pki.servingKey,
			"--client-ca-file=" + c.pki.caCert,
			"--token-auth-file=" + c.pki.tokenFile,
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file=" + c.pki.saPub,
			"--service-account-signing-key-file=" + c.pki.saKey,
			"--service-cluster-ip-range=" + serviceCIDR,
			// Kyverno's controllers authenticate with TokenRequest tokens that must outlive a long test session.
			"--service-account-max-token-expiration=8760h",
			"--profiling=false",
		},
	}
	if c.node == nil {
		p.args = append(p.args, "--authorization-mode=RBAC")
		return p, nil
	}
	// The kubelet is system:node:<name>: the Node authorizer and NodeRestriction limit it to its own node and Pods.
	client, err := c.pki.issue("apiserver-kubelet-client", apiserverKubeletUser, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	p.args = append(p.args,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--kubelet-client-certificate="+client.cert,
		"--kubelet-client-key="+client.key,
		"--kubelet-certificate-authority="+c.pki.caCert,
		"--kubelet-preferred-address-types=InternalIP",
	)
	return p, nil
}

func (c *Cluster) apiserverReady(ctx context.Context) (bool, error) {
	body, err := c.kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return false, fmt.Errorf("/readyz: %w: %s", err, body)
	}
	return string(body) == "ok", nil
}
