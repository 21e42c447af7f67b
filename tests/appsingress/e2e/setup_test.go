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

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/proxy"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/coredns"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/haproxy"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/metallb"
)

var (
	appsIngressGVR   = v1alpha1.GroupVersion.WithResource("appsingresses")
	hostedClusterGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	poolGVR          = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "ipaddresspools"}
)

// hostedClusterCRD is a stub of HyperShift's HostedCluster: the operator reads status.kubeconfig.name and
// status.controlPlaneEndpoint only, so the schema keeps every field.
const hostedClusterCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: hostedclusters.hypershift.openshift.io}
spec:
  group: hypershift.openshift.io
  scope: Namespaced
  names: {kind: HostedCluster, listKind: HostedClusterList, plural: hostedclusters, singular: hostedcluster}
  versions:
  - name: v1beta1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

func createCRD(ctx context.Context, cs apiextensionsclient.Interface, data []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		return err
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

func createNamespaces(ctx context.Context, kube kubernetes.Interface, names ...string) error {
	for _, n := range names {
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

func prepareManagement(ctx context.Context) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	cs, err := apiextensionsclient.NewForConfig(mgmt.RESTConfig())
	if err != nil {
		return err
	}
	crd, err := os.ReadFile(filepath.Join(root, "charts", "apps-ingress-operator", "crds", "hostedcluster.virtual-ingress.io_appsingresses.yaml"))
	if err != nil {
		return err
	}
	if err := createCRD(ctx, cs, crd); err != nil {
		return fmt.Errorf("AppsIngress CRD: %w", err)
	}
	if err := createCRD(ctx, cs, []byte(hostedClusterCRD)); err != nil {
		return fmt.Errorf("HostedCluster CRD: %w", err)
	}
	return createNamespaces(ctx, mgmtKube, clustersNS, operatorNS)
}

func prepareHosted(ctx context.Context) error {
	if err := createNamespaces(ctx, hostedKube, routerNS, metallbNS); err != nil {
		return err
	}
	if err := metallb.InstallCRDs(ctx, hostedCl.RESTConfig()); err != nil {
		return err
	}
	for name, r := range map[string]string{poolA: poolARange, poolB: poolBRange} {
		pool := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool",
			"metadata": map[string]any{"name": name, "namespace": metallbNS},
			// Only Services that name a pool get an address from it.
			"spec": map[string]any{"addresses": []any{r}, "autoAssign": false},
		}}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := hostedDyn.Resource(poolGVR).Namespace(metallbNS).Create(ctx, pool, metav1.CreateOptions{})
			return err == nil || apierrors.IsAlreadyExists(err), nil
		})
		if err != nil {
			return fmt.Errorf("creating IPAddressPool %s: %w", name, err)
		}
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
	p, err := metallb.Start(ctx, workDir, hostedCl.Kubeconfig(), metallbNS)
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

// configSync is what the stand-in sidecar does: hold keeps the files as they are (a sidecar that has not written them
// yet), proxyEdit, when set, changes the main HAProxy file on its way (an HAProxy that refuses it).
var configSync struct {
	hold      atomic.Bool
	proxyEdit atomic.Pointer[func(string) string]
}

// startConfigSync copies the rendered ConfigMaps (each main one with its shards) into CoreDNS's and HAProxy's files
// whenever they change, as the sidecars do; the chart's reload loop, which runs HAProxy here, notices the change.
func startConfigSync(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var lastDNS, lastProxy map[string]string
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if configSync.hold.Load() {
				continue
			}
			if files, ok, err := localenv.ConfigFiles(ctx, mgmtKube, operatorNS, dnsMapName, localenv.ConfigShards); err == nil && ok && !maps.Equal(files, lastDNS) {
				if err := dnsServer.Update(files); err != nil {
					syncErrors.add(err)
				} else {
					lastDNS = files
				}
			}
			files, ok, err := localenv.ConfigFiles(ctx, mgmtKube, operatorNS, proxyMapName, localenv.ConfigShards)
			if err != nil || !ok {
				continue
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
				continue
			}
			if !maps.Equal(files, lastProxy) {
				if err := haproxyProc.Reload(files); err != nil {
					syncErrors.add(err)
				} else {
					lastProxy = files
				}
			}
		}
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
