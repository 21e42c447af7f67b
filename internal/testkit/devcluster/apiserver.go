package devcluster

import (
	"context"
	"fmt"
	"time"
)

// serviceCIDR is --service-cluster-ip-range; nothing routes to it, but Services need addresses.
const serviceCIDR = "10.96.0.0/16"

func (c *Cluster) apiserverProcess() *process {
	return &process{
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
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--tls-cert-file=" + c.pki.servingCert,
			"--tls-private-key-file=" + c.pki.servingKey,
			"--client-ca-file=" + c.pki.caCert,
			"--token-auth-file=" + c.pki.tokenFile,
			"--authorization-mode=RBAC",
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file=" + c.pki.saPub,
			"--service-account-signing-key-file=" + c.pki.saKey,
			"--service-cluster-ip-range=" + serviceCIDR,
			// Kyverno's controllers authenticate with TokenRequest tokens that must outlive a long test session.
			"--service-account-max-token-expiration=8760h",
			"--profiling=false",
		},
	}
}

func (c *Cluster) apiserverReady(ctx context.Context) (bool, error) {
	body, err := c.kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return false, fmt.Errorf("/readyz: %w: %s", err, body)
	}
	return string(body) == "ok", nil
}
