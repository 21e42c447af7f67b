//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/proxy"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kubeobj"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/coredns"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/haproxy"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/metallb"
)

var appsIngressGVR = localenv.AppsIngressGVR

func prepareManagement(ctx context.Context) error {
	if err := env.CreateCRDs(ctx); err != nil {
		return err
	}
	return kubeobj.CreateNamespaces(ctx, mgmtKube, clustersNS, operatorNS)
}

func prepareHosted(ctx context.Context) error {
	if err := kubeobj.CreateNamespaces(ctx, hostedKube, routerNS); err != nil {
		return err
	}
	if err := env.CreatePools(ctx, map[string]string{poolA: poolARange, poolB: poolBRange}); err != nil {
		return err
	}
	// Built now, so that starting it inside a test is quick.
	_, err := metallb.Build(ctx)
	return err
}

func startMetalLB(ctx context.Context) error {
	metallbMu.Lock()
	defer metallbMu.Unlock()
	if metallbProc != nil && !metallbProc.Exited() {
		return nil
	}
	p, err := env.StartMetalLB(ctx)
	if err != nil {
		return err
	}
	metallbProc = p
	return nil
}

func stopMetalLB() {
	metallbMu.Lock()
	defer metallbMu.Unlock()
	if metallbProc != nil {
		_ = metallbProc.Stop()
		metallbProc = nil
	}
}

// dnsOptions and proxyOptions are the operator's render settings; the initial files use them too.
var (
	dnsOptions   dns.Options
	proxyOptions proxy.Options
)

func startDNSAndProxy(ctx context.Context) error {
	ports := make([]int, 5)
	for i := range ports {
		p, err := localproc.FreePort()
		if err != nil {
			return err
		}
		ports[i] = p
	}
	dnsAddr = net.JoinHostPort(podClient, strconv.Itoa(ports[0]))
	proxyPorts.http, proxyPorts.https, proxyPorts.api = ports[1], ports[2], ports[3]
	dnsDir := filepath.Join(workDir, "coredns")
	dnsOptions = dns.Options{Port: ports[0], ProxyIPs: []netip.Addr{netip.MustParseAddr(proxyIP)}, ReloadInterval: "2s", ZoneDir: dnsDir, Shards: localenv.ConfigShards}
	proxyOptions = proxy.Options{
		BindAddress: proxyIP, HTTPPort: ports[1], HTTPSPort: ports[2], APIPort: ports[3],
		StatusPort: ports[4], StateDir: haproxy.StateDir(workDir), Shards: localenv.ConfigShards,
	}
	var err error
	if dnsServer, err = coredns.Start(ctx, dnsDir, dns.Render(dnsOptions, nil).All(), dnsAddr); err != nil {
		return err
	}
	// The chart's own reload loop runs HAProxy, so the tests prove it too.
	root, err := repo.Root()
	if err != nil {
		return err
	}
	script, err := os.ReadFile(filepath.Join(root, "charts", "apps-ingress-operator", "files", "haproxy-reload.sh"))
	if err != nil {
		return err
	}
	if haproxyProc, err = haproxy.StartWithReloader(workDir, proxy.Render(proxyOptions, nil).All(), net.JoinHostPort(proxyIP, strconv.Itoa(ports[2])), string(script)); err != nil {
		_ = dnsServer.Stop()
		return err
	}
	return nil
}

// operator is the controller in this process, wired like cmd/apps-ingress-operator.
type operator struct {
	cancel context.CancelFunc
	done   chan error
}

func startOperator(ctx context.Context) (*operator, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cfg, err := operatorConfig(ctx)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  controller.CacheOptions(operatorNS, []string{clustersNS}),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	if _, err := controller.Setup(mgr, controller.Options{
		DNSConfigMap:   types.NamespacedName{Namespace: operatorNS, Name: dnsMapName},
		ProxyConfigMap: types.NamespacedName{Namespace: operatorNS, Name: proxyMapName},
		ConfigShards:   localenv.ConfigShards,
		DNS:            dnsOptions,
		Proxy:          proxyOptions,
		// CoreDNS and HAProxy run here as processes: their addresses are known, not endpoints of Services.
		DNSReplicas:   controller.StaticReplicas{netip.MustParseAddrPort(dnsAddr)},
		ProxyReplicas: controller.StaticReplicas{netip.AddrPortFrom(netip.MustParseAddr(proxyIP), uint16(proxyOptions.StatusPort))},
		LoadPoll:      200 * time.Millisecond,
		// Short, so that a stuck CoreDNS is repaired within a test.
		DNSRepairAfter: dnsRepairAfter,
		// Short, so that a Ready object's re-check is seen within a test.
		RecheckInterval: recheckInterval,
		// Short, so that the degradation scenarios recover within seconds.
		HostedClusterTimeout: 3 * time.Second,
		CleanupTimeout:       20 * time.Second,
		BackoffBase:          200 * time.Millisecond,
		BackoffMax:           3 * time.Second,
	}); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	o := &operator{cancel: cancel, done: make(chan error, 1)}
	go func() { o.done <- mgr.Start(runCtx) }()
	return o, nil
}

func (o *operator) stop() {
	o.cancel()
	if err := <-o.done; err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
	}
}

// recheckInterval is the operator's re-check period of Ready objects.
const recheckInterval = 5 * time.Second

// dnsRepairAfter is how long a CoreDNS replica may run one configuration without serving an entry before the
// operator asks it to reload.
const dnsRepairAfter = 5 * time.Second

// configSync is what the stand-in sidecar does: hold keeps the files as they are (a sidecar that has not written them
// yet), proxyEdit, when set, changes the main HAProxy file on its way (an HAProxy that refuses it), corefileEdit the
// Corefile (a CoreDNS whose restart fails). An edited set counts as delivered: it is not written again, unedited,
// until the operator changes the files.
var configSync struct {
	hold         atomic.Bool
	proxyEdit    atomic.Pointer[func(string) string]
	corefileEdit atomic.Pointer[func(string) string]
}

// startConfigSync copies the rendered ConfigMaps (each main one with its shards) into CoreDNS's and HAProxy's files
// whenever they change, as the sidecars do; the chart's reload loop, which runs HAProxy here, notices the change.
func startConfigSync(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var lastDNS, lastProxy map[string]string
		_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, false, func(ctx context.Context) (bool, error) {
			if configSync.hold.Load() {
				return false, nil
			}
			if files, ok, err := localenv.ConfigFiles(ctx, mgmtKube, operatorNS, dnsMapName, localenv.ConfigShards); err == nil && ok && !maps.Equal(files, lastDNS) {
				delivered := files
				if edit := configSync.corefileEdit.Load(); edit != nil {
					delivered = maps.Clone(files)
					delivered[dns.CorefileKey] = (*edit)(files[dns.CorefileKey])
				}
				if err := dnsServer.Update(delivered); err != nil {
					syncErrors.add(err)
				} else {
					lastDNS = files
				}
			}
			files, ok, err := localenv.ConfigFiles(ctx, mgmtKube, operatorNS, proxyMapName, localenv.ConfigShards)
			if err != nil || !ok {
				return false, nil
			}
			if edit := configSync.proxyEdit.Load(); edit != nil {
				files[controller.HAProxyKey] = (*edit)(files[controller.HAProxyKey])
				if !maps.Equal(files, lastProxy) {
					// Written as the sidecar would, without the harness's own check: the reloader meets it.
					if err := haproxyProc.Write(files); err != nil {
						syncErrors.add(err)
					}
					lastProxy = files
				}
				return false, nil
			}
			if !maps.Equal(files, lastProxy) {
				if err := haproxyProc.Reload(files); err != nil {
					syncErrors.add(err)
				} else {
					lastProxy = files
				}
			}
			return false, nil // until ctx ends
		})
	}()
	return func() { cancel(); <-done }
}

// syncErrors are renders CoreDNS or HAProxy refused; every test checks there are none.
var syncErrors errList

type errList struct {
	mu   sync.Mutex
	errs []error
}

func (l *errList) add(err error) { l.mu.Lock(); l.errs = append(l.errs, err); l.mu.Unlock() }
func (l *errList) get() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}
