// Package devcluster runs a real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager) and,
// optionally, Kyverno's admission and background controllers as local processes on loopback ports. Tests get the
// behaviour of the real API server (validation, RBAC, admission webhooks, garbage collection, namespace deletion)
// without Docker. Without a node, Pods are stored but never run; WithNode adds one (containerd, kubelet, kube-proxy,
// kube-scheduler and cluster DNS, as root on Linux) on links of its own, and puts the host back as it found it.
//
// The binaries are built from the pinned modules in tools/devcluster/binaries on first use and cached in
// bin/devcluster; see tools/devcluster for the command line.
package devcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// Component names, as used in log and pid file names and by Logs, StopComponent and StartComponent.
const (
	ComponentEtcd              = "etcd"
	ComponentAPIServer         = "kube-apiserver"
	ComponentControllerManager = "kube-controller-manager"
	ComponentKyverno           = "kyverno-admission"
	ComponentKyvernoBackground = "kyverno-background"
)

// startOrder is also the reverse of the stop order: Kyverno goes before the API server it talks to, and
// etcd last so the API server does not spend its shutdown retrying storage.
var startOrder = []string{
	ComponentEtcd, ComponentAPIServer, ComponentControllerManager,
	ComponentContainerd, ComponentClusterDNS, ComponentScheduler, ComponentKubelet, ComponentKubeProxy,
	ComponentKyverno, ComponentKyvernoBackground,
}

// Options configures Start.
type Options struct {
	// Dir holds certificates, kubeconfigs, etcd data, logs and pid files. Anything there from an earlier
	// cluster is stopped and removed first. Required.
	Dir string
	// RepoRoot is the checkout containing tools/devcluster/binaries. Default: found by walking up from the
	// working directory to the go.mod of github.com/virtual-ingress/virtual-ingress.
	RepoRoot string
	// BinDir caches built binaries. Default: <RepoRoot>/bin/devcluster.
	BinDir string
	// WithKyverno installs Kyverno's CRDs and RBAC and runs its admission and background controllers.
	WithKyverno bool
	// KyvernoOnNode (with WithKyverno and WithNode) installs Kyverno from its chart with `helm install --wait`, its
	// controllers as Pods on the node from images packed from the binaries it builds, instead of running them as
	// processes (see installKyvernoChart).
	KyvernoOnNode bool
	// KyvernoPrevious (with KyvernoOnNode) installs the Kyverno release before the pinned one (built from
	// tools/devcluster/binaries/kyverno-previous), for UpgradeKyverno to upgrade it as users upgrade across a patch.
	KyvernoPrevious bool
	// WithNode runs a node (see the package comment): Pods run, Services route, PVCs bind. Needs root on Linux and
	// the Debian packages of `make debian-packages`; one node per machine.
	WithNode bool
	// WithMultus puts Multus (the thin plugin) in front of the node's own Pod network and installs the
	// NetworkAttachmentDefinition CRD: a Pod annotated k8s.v1.cni.cncf.io/networks gets a secondary interface per
	// attachment, as on clusters that give Pods a leg in a VLAN. Only with WithNode.
	WithMultus bool
	// APIServerAddress is the address the API server serves on instead of 127.0.0.1 (with WithNode, HostIP):
	// HostIP for a second cluster that Pods of another cluster's node must reach.
	APIServerAddress string
	// KyvernoArgs are flags given to both Kyverno controllers after the chart's, replacing those of the same name.
	KyvernoArgs []string
	// Progress receives build and start-up messages. Default: os.Stderr. Use io.Discard to silence.
	Progress io.Writer
	// Timeout bounds waiting for readiness after the binaries exist. Default: 3 minutes.
	Timeout time.Duration
	// Detach lets the processes outlive the program that called Start, as `devcluster up` needs. By
	// default they are killed when it exits, even by SIGKILL or a test timeout, so tests leave no orphans.
	Detach bool
}

// Cluster is a running control plane.
type Cluster struct {
	opts  Options
	dir   string
	bins  map[string]string
	pki   *pki
	ports ports

	server     string
	caPEM      []byte
	kubeconfig string
	rest       *rest.Config
	kube       kubernetes.Interface

	kyverno *kyvernoInstall
	// kyvernoLayouts are the OCI layouts of Kyverno's images by module (kyvernoModule, kyvernoPreviousModule), then by
	// repository, with KyvernoOnNode.
	kyvernoLayouts map[string]map[string]string
	node           *node

	mu    sync.Mutex
	procs map[string]*process

	nodeReadyIn time.Duration
}

type ports struct {
	etcdClient, etcdPeer, apiserver int
	kyvernoWebhook, kyvernoMetrics  int
	backgroundMetrics               int
}

// Start brings a cluster up and returns once it serves requests (and, with WithKyverno, once a policy has
// become Ready). On failure everything it started is stopped again and the logs are left in opts.Dir.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Dir == "" {
		return nil, errors.New("devcluster: Options.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	if opts.RepoRoot == "" {
		if opts.RepoRoot, err = repo.Root(); err != nil {
			return nil, err
		}
	}
	if opts.BinDir == "" {
		opts.BinDir = filepath.Join(opts.RepoRoot, "bin", "devcluster")
	}
	if opts.Progress == nil {
		opts.Progress = os.Stderr
	}
	if opts.Timeout == 0 {
		opts.Timeout = 3 * time.Minute
	}

	bins, err := binaries(ctx, opts.RepoRoot, opts.BinDir, opts.Progress, binarySpecs(opts)...)
	if err != nil {
		return nil, err
	}

	// A cluster left behind by a test binary that died, or an `up` without `down`, would hold the ports'
	// and the files' places.
	if err := Down(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, markerFile), []byte("data of a devcluster; removed by devcluster down\n"), 0o644); err != nil {
		return nil, err
	}

	c := &Cluster{opts: opts, dir: dir, bins: bins, procs: map[string]*process{}}
	if opts.KyvernoOnNode {
		if c.kyvernoLayouts, err = kyvernoLayoutsFor(ctx, opts, bins); err != nil {
			return nil, err
		}
	}
	if err := c.start(ctx); err != nil {
		_ = c.stopAll()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	begin := time.Now()
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()

	p, err := localproc.FreePorts(6)
	if err != nil {
		return err
	}
	c.ports = ports{
		etcdClient: p[0], etcdPeer: p[1], apiserver: p[2],
		kyvernoWebhook: p[3], kyvernoMetrics: p[4], backgroundMetrics: p[5],
	}
	if c.opts.WithNode {
		if err := c.prepareNode(ctx); err != nil {
			return err
		}
	}
	if c.pki, err = generatePKI(c.dir, c.apiserverIPs()...); err != nil {
		return fmt.Errorf("generating certificates: %w", err)
	}
	if c.caPEM, err = os.ReadFile(c.pki.caCert); err != nil {
		return err
	}
	c.server = fmt.Sprintf("https://%s:%d", c.apiserverHost(), c.ports.apiserver)
	c.kubeconfig = filepath.Join(c.dir, "admin.kubeconfig")
	c.rest = restConfig(c.server, c.caPEM, c.pki.adminToken)
	if c.kube, err = kubernetes.NewForConfig(c.internalConfig()); err != nil {
		return err
	}
	if err := writeKubeconfig(filepath.Join(c.dir, "kube-controller-manager.kubeconfig"), c.server, c.caPEM,
		userControllerManager, c.pki.controllerMgrToken); err != nil {
		return err
	}

	if err := c.run(ctx, c.etcdProcess(), c.etcdReady); err != nil {
		return err
	}
	apiserver, err := c.apiserverProcess()
	if err != nil {
		return err
	}
	if err := c.run(ctx, apiserver, c.apiserverReady); err != nil {
		return err
	}
	if err := c.run(ctx, c.controllerManagerProcess(), c.controllerManagerReady); err != nil {
		return err
	}
	// Written last: a kubeconfig on disk means the API server answers.
	if err := writeKubeconfig(c.kubeconfig, c.server, c.caPEM, "admin", c.pki.adminToken); err != nil {
		return err
	}
	c.progressf("control plane ready at %s in %s", c.server, time.Since(begin).Round(100*time.Millisecond))

	if c.opts.WithNode {
		nodeBegin := time.Now()
		if err := c.startNode(ctx); err != nil {
			return err
		}
		c.nodeReadyIn = time.Since(nodeBegin)
		c.progressf("node %s ready in %s", NodeName, c.nodeReadyIn.Round(100*time.Millisecond))
	}

	if c.opts.WithKyverno {
		kyvernoBegin := time.Now()
		start := c.startKyverno
		if c.opts.KyvernoOnNode {
			start = c.installKyvernoChart
		}
		if err := start(ctx); err != nil {
			return err
		}
		c.progressf("kyverno ready in %s", time.Since(kyvernoBegin).Round(100*time.Millisecond))
	}
	return nil
}

// run starts p and waits until ready reports true, failing early if any component has exited.
func (c *Cluster) run(ctx context.Context, p *process, ready func(context.Context) (bool, error)) error {
	p.detach = c.opts.Detach
	c.mu.Lock()
	c.procs[p.name] = p
	c.mu.Unlock()
	if err := p.start(); err != nil {
		return err
	}
	return c.waitFor(ctx, p.name, ready)
}

// waitFor polls ready until it reports true. Any component dying meanwhile ends the wait with that
// component's log, which explains a failure far better than a timeout would.
func (c *Cluster) waitFor(ctx context.Context, what string, ready func(context.Context) (bool, error)) error {
	return c.waitWatching(ctx, what, ready, startOrder)
}

// waitWatching is waitFor watching only the named components for crashes.
func (c *Cluster) waitWatching(ctx context.Context, what string, ready func(context.Context) (bool, error), watch []string) error {
	var lastErr error
	for {
		if err := c.crashed(watch); err != nil {
			return err
		}
		attemptCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, err := ready(attemptCtx)
		cancel()
		if ok {
			return nil
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("devcluster: waiting for %s: %v", what, ctx.Err())
			if lastErr != nil {
				msg += fmt.Sprintf(" (last error: %v)", lastErr)
			}
			if p := c.process(what); p != nil {
				msg += fmt.Sprintf("; last lines of %s:\n%s", logPath(c.dir, what), tailFile(logPath(c.dir, what), 30))
			}
			return errors.New(msg)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (c *Cluster) crashed(names []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range names {
		if p := c.procs[name]; p != nil {
			if err := p.crashError(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Cluster) process(name string) *process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.procs[name]
}

func (c *Cluster) progressf(format string, args ...any) {
	fmt.Fprintf(c.opts.Progress, "devcluster: "+format+"\n", args...)
}

// internalConfig is the admin configuration for devcluster's own requests.
func (c *Cluster) internalConfig() *rest.Config {
	cfg := rest.CopyConfig(c.rest)
	// Writing kyverno.io/v1 policies draws a deprecation warning each time; it means nothing to the user here.
	cfg.WarningHandler = rest.NoWarnings{}
	return cfg
}

// Dir is the absolute data directory.
func (c *Cluster) Dir() string { return c.dir }

// Kubeconfig is the path of a kubeconfig with cluster-admin rights (group system:masters).
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// RESTConfig returns a new copy of the cluster-admin client configuration.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.rest) }

// Components lists the components of this cluster in start order.
func (c *Cluster) Components() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, n := range startOrder {
		if c.procs[n] != nil {
			names = append(names, n)
		}
	}
	return names
}

// LogPath is the log file of a component; it keeps the output of every run of the component.
func (c *Cluster) LogPath(component string) string { return logPath(c.dir, component) }

// Logs returns the last 100 lines of a component's log.
func (c *Cluster) Logs(component string) string { return tailFile(logPath(c.dir, component), 100) }

// StopComponent stops one component (SIGTERM, then SIGKILL after 10 s; 2 s for kube-apiserver) and leaves
// the rest running. Kyverno's controllers exit by themselves when they cannot renew their leader lease for
// 10 s, as their pods would: stopping etcd or kube-apiserver for longer than that takes them down too,
// and they then need StartComponent as well.
func (c *Cluster) StopComponent(component string) error {
	p := c.process(component)
	if p == nil {
		return fmt.Errorf("devcluster: no component %q (have %s)", component, strings.Join(c.Components(), ", "))
	}
	return p.stop()
}

// StartComponent starts a component stopped by StopComponent again, with the same flags, and waits until it
// is ready: for Kyverno's controllers, until they hold their leader lease again.
func (c *Cluster) StartComponent(ctx context.Context, component string) error {
	p := c.process(component)
	if p == nil {
		return fmt.Errorf("devcluster: no component %q (have %s)", component, strings.Join(c.Components(), ", "))
	}
	if running, _ := p.exited(); !running {
		return fmt.Errorf("devcluster: %s is running", component)
	}
	ready := map[string]func(context.Context) (bool, error){
		ComponentEtcd:              c.etcdReady,
		ComponentAPIServer:         c.apiserverReady,
		ComponentControllerManager: c.controllerManagerRestarted,
		ComponentKyverno:           c.kyvernoAdmissionRestarted,
		ComponentKyvernoBackground: c.kyvernoBackgroundReady,
		ComponentContainerd:        c.containerdReady,
		ComponentClusterDNS:        c.clusterDNSReady,
		ComponentKubelet:           c.nodeReady,
	}[component]
	if c.node != nil {
		switch component {
		case ComponentScheduler:
			ready = c.healthz("127.0.0.1", c.node.ports.scheduler, true)
		case ComponentKubeProxy:
			ready = c.healthz(NodeIP, c.node.ports.proxyHealthz, false)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if err := p.start(); err != nil {
		return err
	}
	// Only this component: others may have been stopped, or have exited, on purpose or not; restarting
	// them one after the other must be possible.
	return c.waitWatching(ctx, component, ready, []string{component})
}

// Stop stops every component and removes the data directory. It is safe to call more than once.
func (c *Cluster) Stop() error {
	err := c.stopAll()
	if err != nil {
		return err
	}
	return os.RemoveAll(c.dir)
}

func (c *Cluster) stopAll() error {
	var errs []error
	if c.node != nil && c.kube != nil {
		errs = append(errs, drainNode(c.kube, func(name string) error {
			if p := c.process(name); p != nil {
				return p.stop()
			}
			return nil
		}))
	}
	c.mu.Lock()
	var procs []*process
	for _, name := range slices.Backward(startOrder) {
		if p := c.procs[name]; p != nil {
			procs = append(procs, p)
		}
	}
	c.mu.Unlock()
	for _, p := range stopGroups(procs) {
		errs = append(errs, stopParallel(p))
	}
	if c.node != nil {
		errs = append(errs, cleanupNode(c.node.ns))
	}
	return errors.Join(errs...)
}

// stopGroups batches the Kyverno controllers together: they do not depend on each other and each may take
// seconds to shut down.
func stopGroups(procs []*process) [][]*process {
	var groups [][]*process
	var kyverno []*process
	for _, p := range procs {
		if strings.HasPrefix(p.name, "kyverno") {
			kyverno = append(kyverno, p)
			continue
		}
		if len(kyverno) > 0 {
			groups = append(groups, kyverno)
			kyverno = nil
		}
		groups = append(groups, []*process{p})
	}
	if len(kyverno) > 0 {
		groups = append(groups, kyverno)
	}
	return groups
}

func stopParallel(procs []*process) error {
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Go(func() { errs[i] = p.stop() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Down stops every component recorded in dir's pid files, whoever started them, and removes dir. It does
// nothing when nothing runs and dir does not exist.
func Down(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := checkClusterDir(dir); err != nil {
		return err
	}
	// The machine's node is this cluster's if its processes name dir, or if none is left (a killed run's empty
	// cgroups); another cluster's running node is not this Down's to stop.
	_, nodeErr := os.Stat(newNodePaths(dir).root)
	if nodeErr == nil && !nodeOwnedBy(dir) {
		nodeErr = os.ErrNotExist
	}
	if nodeErr == nil {
		if err := drainNodeFromDir(dir); err != nil {
			fmt.Fprintf(os.Stderr, "devcluster: stopping the node's Pods: %v\n", err)
		}
	}
	pidFiles, _ := filepath.Glob(filepath.Join(dir, "pids", "*.pid"))
	byName := map[string]string{}
	for _, f := range pidFiles {
		byName[strings.TrimSuffix(filepath.Base(f), ".pid")] = f
	}
	order := slices.Clone(startOrder)
	for name := range byName {
		if !slices.Contains(order, name) {
			order = append(order, name) // unknown components first in the reversed order
		}
	}
	var errs []error
	var group []string
	flush := func() {
		var wg sync.WaitGroup
		gerrs := make([]error, len(group))
		for i, f := range group {
			wg.Go(func() { gerrs[i] = stopPidFile(f, dir) })
		}
		wg.Wait()
		errs = append(errs, gerrs...)
		group = nil
	}
	for _, name := range slices.Backward(order) {
		f, ok := byName[name]
		if !ok {
			continue
		}
		if strings.HasPrefix(name, "kyverno") {
			group = append(group, f) // see stopGroups
			continue
		}
		flush()
		group = []string{f}
		flush()
	}
	flush()
	if nodeErr == nil {
		errs = append(errs, cleanupNode(nil))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// markerFile marks a directory as created by Start, and so as safe for Down to delete.
const markerFile = ".devcluster-data"

// checkClusterDir refuses directories that Down must not delete: `--dir .` by mistake would otherwise
// remove a checkout.
func checkClusterDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) || err == nil && len(entries) == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, markerFile)); err != nil {
		return fmt.Errorf("devcluster: %s is not empty and was not created by devcluster; refusing to use or delete it", dir)
	}
	return nil
}
