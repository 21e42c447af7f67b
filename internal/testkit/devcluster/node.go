package devcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/netns"
)

// Node components, in start order after the control plane.
const (
	ComponentContainerd = "containerd"
	ComponentClusterDNS = "coredns"
	ComponentScheduler  = "kube-scheduler"
	ComponentKubelet    = "kubelet"
	ComponentKubeProxy  = "kube-proxy"
)

// node is the state of the cluster's node while it runs.
type node struct {
	paths  nodePaths
	before *HostState
	ns     *netns.Namespace
	ports  struct{ kubelet, kubeletHealthz, proxyHealthz, proxyMetrics, scheduler int }
}

// prepareNode claims the machine's one node, records the host's state (for the check after it stops) and makes the
// node's namespaces and link, before the API server starts: it serves on the host's end of that link, which Pods
// can reach.
func (c *Cluster) prepareNode(ctx context.Context) error {
	if err := nodePrerequisites(); err != nil {
		return err
	}
	if err := claimNode(); err != nil {
		return err
	}
	n := &node{paths: newNodePaths(c.dir)}
	c.node = n
	if err := refuseConflicts(); err != nil {
		return err
	}
	for _, d := range []string{n.paths.root, n.paths.cniConf, n.paths.cniIPAM, n.paths.cniBin, n.paths.multusCache, n.paths.kubeletRoot, n.paths.images, n.paths.volumes, n.paths.registryHosts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	var err error
	if n.before, err = CaptureHost(); err != nil {
		return fmt.Errorf("recording the host's state: %w", err)
	}
	if err := n.before.save(n.paths.hostBefore); err != nil {
		return err
	}
	p, err := localproc.FreePorts(5)
	if err != nil {
		return err
	}
	n.ports.kubelet, n.ports.kubeletHealthz, n.ports.proxyHealthz, n.ports.proxyMetrics, n.ports.scheduler = p[0], p[1], p[2], p[3], p[4]
	return c.isolateNode(ctx)
}

// podEgressChain is the node's filter chain in FORWARD: what Pods may send where.
const podEgressChain = "DEVCLUSTER-NODE"

// NodeAvailable says why this machine cannot run a node, or nil when it can.
func NodeAvailable() error { return nodePrerequisites() }

// nodePrerequisites explains what a node needs that this machine lacks.
func nodePrerequisites() error {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		return errors.New("devcluster: a node needs root on Linux (it makes namespaces, links, mounts and cgroups)")
	}
	var missing []string
	for _, cmd := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "iptables", "conntrack", "ip", "unshare", "nsenter", "tini"} {
		if _, err := exec.LookPath(cmd); err != nil {
			missing = append(missing, cmd)
		}
	}
	if _, err := os.Stat(filepath.Join(cniBinDir, "bridge")); err != nil {
		missing = append(missing, cniBinDir+"/bridge")
	}
	if len(missing) > 0 {
		return fmt.Errorf("devcluster: a node needs %s: run `make debian-packages` as root", strings.Join(missing, ", "))
	}
	return nil
}

// startNode starts containerd, cluster DNS, the scheduler, the kubelet and kube-proxy, and returns once the node is
// Ready without taints, Service rules are in place and cluster DNS answers.
func (c *Cluster) startNode(ctx context.Context) error {
	n := c.node
	if err := c.writeNodeFiles(); err != nil {
		return err
	}
	if err := c.applyNodeRBAC(ctx); err != nil {
		return err
	}
	if c.opts.WithMultus {
		if err := c.installMultus(ctx); err != nil {
			return err
		}
	}
	if err := c.run(ctx, c.nodeProcess(ComponentContainerd, "containerd", "--config", n.paths.containerdConfig), c.containerdReady); err != nil {
		return err
	}
	if err := c.buildLocalImages(ctx); err != nil {
		return err
	}
	if err := c.run(ctx, c.nodeProcess(ComponentClusterDNS, c.bins[binCoreDNS.file], "-conf", n.paths.corefile), c.clusterDNSReady); err != nil {
		return err
	}
	// The scheduler is a control-plane component: it runs on the host beside the API server.
	if err := c.run(ctx, &process{name: ComponentScheduler, dataDir: c.dir, bin: c.bins[binScheduler.file], args: []string{
		"--kubeconfig=" + n.paths.schedulerKubeconfig, "--authentication-kubeconfig=" + n.paths.schedulerKubeconfig,
		"--authorization-kubeconfig=" + n.paths.schedulerKubeconfig, "--leader-elect=false", "--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", n.ports.scheduler), "--profiling=false",
	}}, c.healthz("127.0.0.1", n.ports.scheduler, true)); err != nil {
		return err
	}
	if err := c.run(ctx, c.nodeProcess(ComponentKubelet, c.bins[binKubelet.file],
		"--config="+n.paths.kubeletConfig, "--kubeconfig="+n.paths.kubeletKubeconfig, "--root-dir="+n.paths.kubeletRoot,
		"--node-ip="+NodeIP, "--hostname-override="+NodeName, "--cert-dir="+filepath.Join(n.paths.kubeletRoot, "pki"),
	), c.nodeReady); err != nil {
		return err
	}
	if err := c.run(ctx, c.nodeProcess(ComponentKubeProxy, c.bins[binKubeProxy.file], "--config="+n.paths.proxyConfig),
		c.healthz(NodeIP, n.ports.proxyHealthz, false)); err != nil {
		return err
	}
	return c.createLocalVolumes(ctx)
}

// nodeProcess is a component that runs on the node: in its cgroup and its namespaces.
func (c *Cluster) nodeProcess(name, bin string, args ...string) *process {
	return &process{name: name, bin: bin, args: args, dataDir: c.dir, wrap: append(cgroupWrap(), c.node.ns.EnterArgs(c.dir)...)}
}

// writeNodeFiles writes the configuration, certificates and kubeconfigs of the node's components.
func (c *Cluster) writeNodeFiles() error {
	n := c.node
	ip := net.ParseIP(NodeIP)
	kubeletServing, err := c.pki.issue("kubelet-serving", NodeName, nil, []net.IP{ip}, []string{NodeName})
	if err != nil {
		return err
	}
	// The kubelet's identity in the Node authorizer and NodeRestriction: system:node:<name> in system:nodes.
	kubeletClient, err := c.pki.issue("kubelet-client", "system:node:"+NodeName, []string{"system:nodes"}, nil, nil)
	if err != nil {
		return err
	}
	conflist, err := json.MarshalIndent(cniConfig(n.paths), "", "  ")
	if err != nil {
		return err
	}
	writes := []error{
		os.WriteFile(n.paths.containerdConfig, []byte(containerdConfig(n.paths)), 0o600),
		os.WriteFile(filepath.Join(n.paths.cniConf, "10-devcluster.conflist"), conflist, 0o600),
		writeYAML(n.paths.kubeletConfig, kubeletConfig(n.paths, c.pki.caCert, kubeletServing, n.ports.kubelet, n.ports.kubeletHealthz)),
		writeYAML(n.paths.proxyConfig, proxyConfig(n.paths, n.ports.proxyHealthz, n.ports.proxyMetrics)),
		os.WriteFile(n.paths.corefile, []byte(corefile(n.paths, c.server)), 0o600),
		writeCertKubeconfig(n.paths.kubeletKubeconfig, c.server, c.caPEM, "system:node:"+NodeName, kubeletClient),
		writeKubeconfig(n.paths.proxyKubeconfig, c.server, c.caPEM, userProxy, c.pki.proxyToken),
		writeKubeconfig(n.paths.schedulerKubeconfig, c.server, c.caPEM, userScheduler, c.pki.schedulerToken),
		writeKubeconfig(n.paths.dnsKubeconfig, c.server, c.caPEM, userDNS, c.pki.dnsToken),
		c.linkCNIPlugins(),
	}
	if c.opts.WithMultus {
		multus, err := json.MarshalIndent(multusConfig(n.paths), "", "  ")
		if err != nil {
			return err
		}
		// containerd takes the first configuration of the directory by name.
		writes = append(writes, os.WriteFile(filepath.Join(n.paths.cniConf, "00-multus.conf"), multus, 0o600),
			writeKubeconfig(n.paths.multusKubeconfig, c.server, c.caPEM, userMultus, c.pki.multusToken))
	}
	return errors.Join(writes...)
}

// linkCNIPlugins fills the node's CNI plugin directory: Debian's plugins, and Multus when the node runs it. A
// directory of the node's own keeps Multus off the host's plugin directory.
func (c *Cluster) linkCNIPlugins() error {
	entries, err := os.ReadDir(cniBinDir)
	if err != nil {
		return err
	}
	links := map[string]string{}
	for _, e := range entries {
		links[e.Name()] = filepath.Join(cniBinDir, e.Name())
	}
	if c.opts.WithMultus {
		links["multus"] = c.bins[binMultus.file]
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(c.node.paths.cniBin, name)); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) containerdReady(ctx context.Context) (bool, error) {
	if _, err := os.Stat(c.node.paths.containerdSock); err != nil {
		return false, nil
	}
	out, err := c.ctr(ctx, nil, "version")
	if err != nil {
		return false, fmt.Errorf("ctr version: %w: %s", err, out)
	}
	return true, nil
}

// ctr runs containerd's CLI against the node's containerd, in the CRI's namespace.
func (c *Cluster) ctr(ctx context.Context, stdin *os.File, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.node.paths.containerdSock, "--namespace", "k8s.io"}, args...)...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	return cmd.CombinedOutput()
}

func (c *Cluster) clusterDNSReady(ctx context.Context) (bool, error) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort(NodeIP, "53"))
	}}
	addrs, err := r.LookupHost(ctx, "kubernetes.default.svc."+clusterDomain)
	if err != nil {
		return false, err
	}
	return len(addrs) == 1 && addrs[0] == serviceIP, nil
}

// nodeReady is the node registered, Ready, and without the taints the node lifecycle controller removes once it is.
func (c *Cluster) nodeReady(ctx context.Context) (bool, error) {
	node, err := c.kube.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if len(node.Spec.Taints) > 0 {
		return false, fmt.Errorf("node has taints %v", node.Spec.Taints)
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue, fmt.Errorf("node Ready=%s: %s", cond.Status, cond.Message)
		}
	}
	return false, nil
}

// healthz polls a component's /healthz at host:port (HTTPS with its self-signed certificate, or HTTP).
func (c *Cluster) healthz(host string, port int, https bool) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		return probeHealthz(ctx, host, port, https)
	}
}

// NodeReadyIn is how long the node took from containerd's start to Ready with its Service rules and cluster DNS
// in place; zero without a node.
func (c *Cluster) NodeReadyIn() time.Duration { return c.nodeReadyIn }

// AllowPodsTo lets the Pods' packets leave through link, a link the caller gave the node (see Namespace; the node
// drops every other way out, so that nothing leaves the machine). The returned function takes the permission back.
func (c *Cluster) AllowPodsTo(link string) (func() error, error) {
	if c.node == nil {
		return nil, errors.New("devcluster: AllowPodsTo needs a cluster started WithNode")
	}
	rule := []string{podEgressChain, "-i", podBridge, "-o", link, "-j", "ACCEPT"}
	ctx := context.Background()
	if err := c.node.ns.Run(ctx, "iptables", append([]string{"-I"}, rule...)...); err != nil {
		return nil, err
	}
	return func() error {
		if !c.node.ns.Alive() {
			return nil // gone with the node
		}
		return c.node.ns.Run(ctx, "iptables", append([]string{"-D"}, rule...)...)
	}, nil
}

// Namespace is the node's: tests run commands in it (ip, iptables, dig), listen in it, or move links into it by its
// PID, as on a machine whose node has more than one network. Nil without a node.
func (c *Cluster) Namespace() *netns.Namespace {
	if c.node == nil {
		return nil
	}
	return c.node.ns
}
