//go:build e2e

// Package e2e_test runs the apps-ingress-operator against two real control planes at once
// (internal/testkit/devcluster): a management cluster holding AppsIngress, a HostedCluster CRD stub and the
// kubeconfig Secrets, and a second cluster playing the hosted cluster, where MetalLB's real controller assigns the
// LoadBalancer IPs. The rendered ConfigMaps are served by a real CoreDNS and a real HAProxy on loopback, copied
// into their files as a kubelet would and reloaded as the chart does:
// go test -tags e2e ./tests/appsingress/e2e/ (make e2e-appsingress).
package e2e_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/coredns"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/haproxy"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

// Addresses on loopback. Linux answers for all of 127.0.0.0/8, so a client can pick its source address: one
// inside the VLAN CIDR gets the VLAN view, 127.0.0.1 stands for the pod network.
const (
	vlanCIDR   = "127.0.1.0/24"
	vlanClient = "127.0.1.5"
	// A second VLAN, for a cluster whose clients must learn nothing of the first VLAN's clusters.
	otherVLANCIDR   = "127.0.4.0/24"
	otherVLANClient = "127.0.4.5"
	podClient       = "127.0.0.1"
	proxyIP         = "127.0.0.1"
	poolA           = "apps"
	poolARange      = "127.0.2.10-127.0.2.29"
	poolB           = "apps-b"
	poolBRange      = "127.0.3.10-127.0.3.29"
	routerNS        = "openshift-ingress"
	clustersNS      = "clusters"
	// The chart's names, rendered as render.Render does (release apps-ingress-operator in namespace virtual-ingress):
	// the operator runs with the chart's RBAC, so its names must be the chart's.
	operatorNS   = "virtual-ingress"
	operatorSA   = "apps-ingress-operator"
	dnsMapName   = "apps-ingress-operator-dns"
	proxyMapName = "apps-ingress-operator-proxy"
	baseDomain   = "example.com"
	// Service ports in the hosted cluster, which the router stand-ins listen on at the external IPs.
	svcHTTP, svcHTTPS = 18080, 18443
)

var (
	env            *localenv.Env
	mgmt, hostedCl *devcluster.Cluster
	mgmtKube       kubernetes.Interface
	mgmtDyn        dynamic.Interface
	hostedKube     kubernetes.Interface
	hostedDyn      dynamic.Interface
	dnsServer      *coredns.Server
	dnsAddr        string
	haproxyProc    *haproxy.Proxy
	proxyPorts     struct{ http, https, api int }
	op             *operator
	workDir        string

	metallbMu   sync.Mutex
	metallbProc *localproc.Process
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	level := zapcore.Level(1)
	if os.Getenv("APPSINGRESS_TEST_DEBUG") != "" {
		level = -1
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(level)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var err error
	if workDir, err = os.MkdirTemp("", "appsingress-e2e-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(workDir)
	begin := time.Now()
	stop, err := setup(ctx)
	defer stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "two clusters, MetalLB, CoreDNS, HAProxy and the operator up in %s\n", time.Since(begin).Round(100*time.Millisecond))
	return m.Run()
}

// setup starts everything; the returned function stops whatever was started, also after an error.
func setup(ctx context.Context) (func(), error) {
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	var err error
	env, err = localenv.StartClusters(ctx, workDir, localenv.Options{})
	if env != nil {
		stops = append(stops, env.Stop)
	}
	if err != nil {
		return stop, err
	}
	mgmt, hostedCl = env.Mgmt, env.Hosted
	mgmtKube, mgmtDyn, hostedKube, hostedDyn = env.MgmtKube, env.MgmtDyn, env.HostedKube, env.HostedDyn
	if err := prepareManagement(ctx); err != nil {
		return stop, err
	}
	if err := prepareHosted(ctx); err != nil {
		return stop, err
	}
	stops = append(stops, stopMetalLB)

	if err := startDNSAndProxy(ctx); err != nil {
		return stop, err
	}
	stops = append(stops, func() { _ = dnsServer.Stop(); _ = haproxyProc.Stop() })

	if op, err = startOperator(ctx); err != nil {
		return stop, err
	}
	stops = append(stops, op.stop)
	sync := startConfigSync(ctx)
	stops = append(stops, sync)
	return stop, nil
}
