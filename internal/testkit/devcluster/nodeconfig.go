package devcluster

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// The node's names and addresses. Every address lives on links the node creates, in the benchmarking range
// 198.18.0.0/15, which is never routed off a machine: a veth pair joins the host (nodeLink, HostIP) to the node's
// network namespace (nodeIface, NodeIP), and the Pods' bridge (podBridge) is inside that namespace. The Pods' and the
// Services' ranges are routed from the host to the node, and the node has no default route.
const (
	NodeName = "devcluster-node"
	// HostIP is the host's end of the node's link, where the API server serves: a server a test runs on the host for
	// Pods (a database, a second cluster's API server, an ingress controller) listens here.
	HostIP = "198.18.0.1"
	// NodeIP is the node's address: the kubelet's, cluster DNS's, NodePorts' and hostNetwork Pods'.
	NodeIP         = "198.18.0.2"
	nodeLinkPrefix = "/30"
	// nodeRange holds every address of the node's; the node refuses to start where the host routes any of it.
	nodeRange = "198.18.0.0/16"
	// LinksRange is the other half of the benchmarking range, for the links a test gives the node (a VLAN's bridge
	// and the node's address on it): kube-proxy serves NodePorts on the node's addresses there too, as a node with a
	// leg on a VLAN does.
	LinksRange = "198.19.0.0/16"
	nodeLink   = "vi-node0"
	nodeIface  = "eth0"
	podBridge  = "vi-cni0"
	podCIDR    = "198.18.1.0/24"
	// PodCIDR is the Pods' addresses, for a host server's access rules.
	PodCIDR = podCIDR
	// clusterDomain is the kubelet's and cluster DNS's domain.
	clusterDomain = "cluster.local"
	// cniBinDir is where Debian's containernetworking-plugins puts the plugins.
	cniBinDir = "/usr/lib/cni"
	// pauseImage is the sandbox image built from tools/devcluster/pause.
	pauseImage = "localhost/devcluster/pause:1"
	// EchoImage is the test workload built from tools/devcluster/echo (see its command line there); every node
	// has it, for Pods with imagePullPolicy Never.
	EchoImage = "localhost/devcluster/echo:1"
)

// nodePaths are the node's files and directories under the cluster's data directory.
type nodePaths struct {
	root, containerdConfig, containerdSock, containerdRoot, containerdState, runcRoot string
	registryHosts                                                                     string
	cniConf, cniIPAM, cniBin, multusCache, multusKubeconfig                           string
	kubeletRoot, kubeletConfig, kubeletKubeconfig, podLogs                            string
	proxyConfig, proxyKubeconfig, schedulerKubeconfig, dnsKubeconfig, corefile        string
	images, volumes, hostBefore, private, tunables                                    string
}

func newNodePaths(dataDir string) nodePaths {
	r := filepath.Join(dataDir, "node")
	j := func(p ...string) string { return filepath.Join(append([]string{r}, p...)...) }
	return nodePaths{
		root: r, containerdConfig: j("containerd.toml"), containerdSock: j("containerd", "containerd.sock"),
		containerdRoot: j("containerd", "root"), containerdState: j("containerd", "state"), runcRoot: j("runc"),
		registryHosts: j("containerd", "certs.d"),
		cniConf:       j("cni", "net.d"), cniIPAM: j("cni", "ipam"), cniBin: j("cni", "bin"), multusCache: j("cni", "multus"),
		multusKubeconfig: j("multus.kubeconfig"), kubeletRoot: j("kubelet"),
		kubeletConfig: j("kubelet.yaml"), kubeletKubeconfig: j("kubelet.kubeconfig"), podLogs: j("pods"),
		proxyConfig: j("kube-proxy.yaml"), proxyKubeconfig: j("kube-proxy.kubeconfig"),
		schedulerKubeconfig: j("kube-scheduler.kubeconfig"), dnsKubeconfig: j("coredns.kubeconfig"),
		corefile: j("Corefile"), images: j("images"), volumes: j("volumes"), hostBefore: j("host-before.json"),
		private: j("private"), tunables: j("sysctl"),
	}
}

// containerdConfig keeps containerd's state, sockets and runc's state under the data directory; the CRI settings
// are those this kind of machine needs (see restrict_oom_score_adj) and a sandbox image that never pulls. Registries
// are configured by hosts.toml files under the node's own certs.d (TrustRegistry), never the host's /etc/containerd.
func containerdConfig(p nodePaths) string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q
# Plugins that would use fixed host paths or kernel features this node does not need.
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  # Without CAP_SYS_RESOURCE, runc cannot give the sandbox a negative oom_score_adj and fails to start it.
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %q
`, p.containerdRoot, p.containerdState, p.containerdSock, p.containerdSock+".ttrpc", pauseImage, p.runcRoot, p.cniBin, p.cniConf,
		p.registryHosts)
}

// cniConfig is the Pods' network: a bridge of their own with host-local addresses. No masquerading: Pods reach
// the node, its Services and each other, and nothing beyond the machine.
func cniConfig(p nodePaths) map[string]any {
	return map[string]any{
		"cniVersion": "1.0.0",
		"name":       "devcluster",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": podBridge, "isGateway": true, "ipMasq": false, "hairpinMode": true,
				"ipam": map[string]any{
					"type": "host-local", "dataDir": p.cniIPAM,
					"ranges": []any{[]any{map[string]any{"subnet": podCIDR}}},
					"routes": []any{map[string]any{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]any{"portMappings": true}},
		},
	}
}

// multusConfig is the node's first CNI configuration when it runs Multus: the node's own network (cniConfig) is
// every Pod's first interface, and an annotated Pod's attachments are added after it. Multus reads Pods and
// NetworkAttachmentDefinitions with its own identity, and keeps its cache under the data directory.
func multusConfig(p nodePaths) map[string]any {
	return map[string]any{
		"cniVersion":   "1.0.0",
		"name":         "multus",
		"type":         "multus",
		"kubeconfig":   p.multusKubeconfig,
		"binDir":       p.cniBin,
		"cniDir":       p.multusCache,
		"confDir":      p.cniConf,
		"capabilities": map[string]any{"portMappings": true},
		"delegates":    []any{cniConfig(p)},
	}
}

// kubeletConfig follows the facts of this kind of machine: cgroup v1 with the cgroupfs driver, no swap checks, and
// eviction thresholds and image garbage collection that never evict or delete what cannot be pulled again.
func kubeletConfig(p nodePaths, caCert string, serving certFiles, port, healthzPort int) map[string]any {
	return map[string]any{
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind":       "KubeletConfiguration",
		"address":    NodeIP, "port": port, "readOnlyPort": 0,
		"healthzBindAddress": NodeIP, "healthzPort": healthzPort,
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": caCert},
		},
		"authorization":     map[string]any{"mode": "Webhook"},
		"tlsCertFile":       serving.cert,
		"tlsPrivateKeyFile": serving.key,
		"cgroupDriver":      "cgroupfs",
		// The node's own cgroup: its Pods' kubepods are below it, never beside another kubelet's.
		"cgroupRoot":               "/" + cgroupParent,
		"failCgroupV1":             false,
		"failSwapOn":               false,
		"containerRuntimeEndpoint": "unix://" + p.containerdSock,
		"clusterDNS":               []string{NodeIP},
		"clusterDomain":            clusterDomain,
		"resolvConf":               "",
		"podLogsDir":               p.podLogs,
		"volumePluginDir":          filepath.Join(p.kubeletRoot, "volume-plugins"),
		"evictionHard": map[string]string{
			"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%",
		},
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"serializeImagePulls":         false,
		"shutdownGracePeriod":         "0s",
	}
}

// proxyConfig keeps kube-proxy's ports and its NodePorts on the node's own addresses, and leaves the conntrack sysctls
// alone (conntrack zeroes mean "do not set"; they are the kernel's, not the network namespace's).
func proxyConfig(p nodePaths, healthzPort, metricsPort int) map[string]any {
	return map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"clientConnection":   map[string]any{"kubeconfig": p.proxyKubeconfig},
		"mode":               "iptables",
		"clusterCIDR":        podCIDR,
		"hostnameOverride":   NodeName,
		"bindAddress":        NodeIP,
		"healthzBindAddress": fmt.Sprintf("%s:%d", NodeIP, healthzPort),
		"metricsBindAddress": fmt.Sprintf("%s:%d", NodeIP, metricsPort),
		"nodePortAddresses":  []string{NodeIP + "/32", LinksRange},
		"iptables":           map[string]any{"localhostNodePorts": false},
		"conntrack": map[string]any{
			"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s",
		},
	}
}

// corefile is cluster DNS: the kubernetes plugin for the cluster domain, on the node's address. Other names are
// refused rather than forwarded: nothing leaves the machine.
func corefile(p nodePaths, server string) string {
	return fmt.Sprintf(`.:53 {
    bind %s
    errors
    kubernetes %s in-addr.arpa ip6.arpa {
        endpoint %s
        kubeconfig %s devcluster
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
}
`, NodeIP, clusterDomain, server, p.dnsKubeconfig)
}

// writeYAML writes obj as YAML.
func writeYAML(path string, obj any) error {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
