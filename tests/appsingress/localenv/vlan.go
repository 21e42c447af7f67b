package localenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/netns"
)

// The "VLANs" of the node tier and its benchmark, built as on a machine whose node has a leg on each: per VLAN, a
// bridge in the node's network namespace holding the node's address on it (Multus attachments and hostNetwork Pods use
// it), and a network namespace of its own for the hosts on the VLAN, joined to that bridge by a veth pair: the VLAN
// client, and the hosted clusters' routers on the MetalLB addresses. The second VLAN is another cluster's: its client
// must learn nothing of the first VLAN's clusters. Nothing is routed off the machine: every address is in the
// benchmarking range, on links created here that go with their namespaces.
const (
	VLANBridge     = "vi-vlan0"
	vlanNodeLink   = "vi-vlanc0"
	NodeVLANCIDR   = "198.19.10.0/24"
	VLANNodeIP     = "198.19.10.1"
	NodeVLANClient = "198.19.10.5"
	RouterA        = "198.19.10.100"
	RouterB        = "198.19.10.101"

	OtherVLANBridge   = "vi-vlan1"
	otherVLANNodeLink = "vi-vlanc1"
	OtherVLANCIDR     = "198.19.20.0/24"
	OtherVLANNodeIP   = "198.19.20.1"
	OtherVLANClient   = "198.19.20.5"
	RouterC           = "198.19.20.100"
)

// vlan is one VLAN of the node tier.
type vlan struct {
	bridge, nodeLink, cidr, nodeIP, client string
	routers                                []string
	// hosts is the namespace of the VLAN's hosts while it is set up: one per process, as the node is.
	hosts *netns.Namespace
}

var vlans = []*vlan{
	{bridge: VLANBridge, nodeLink: vlanNodeLink, cidr: NodeVLANCIDR, nodeIP: VLANNodeIP, client: NodeVLANClient, routers: []string{RouterA, RouterB}},
	{bridge: OtherVLANBridge, nodeLink: otherVLANNodeLink, cidr: OtherVLANCIDR, nodeIP: OtherVLANNodeIP, client: OtherVLANClient, routers: []string{RouterC}},
}

// SetUpVLAN creates both VLANs and lets the node's Pods answer their clients; the returned function undoes it all.
func SetUpVLAN(cluster *devcluster.Cluster) (func() error, error) {
	var undo undoStack
	for _, v := range vlans {
		u, err := v.setUp(cluster)
		if err != nil {
			return nil, errors.Join(err, undo.run())
		}
		undo = append(undo, u)
	}
	return undo.run, nil
}

// undoStack is what a set-up did, each step's undo in the order they were done.
type undoStack []func() error

// run undoes every step, the last first, and joins their errors.
func (u undoStack) run() error {
	var errs []error
	for i := len(u) - 1; i >= 0; i-- {
		errs = append(errs, u[i]())
	}
	return errors.Join(errs...)
}

func (v *vlan) setUp(cluster *devcluster.Cluster) (func() error, error) {
	node := cluster.Namespace()
	if node == nil {
		return nil, errors.New("localenv: the VLAN needs a cluster with a node")
	}
	hosts, err := netns.New(netns.Options{})
	if err != nil {
		return nil, err
	}
	undo := undoStack{func() error { hosts.Close(); v.hosts = nil; return nil }}
	ctx := context.Background()
	inNode := func(args ...string) func() error { return func() error { return node.Run(ctx, "ip", args...) } }
	inHosts := func(args ...string) func() error { return func() error { return hosts.Run(ctx, "ip", args...) } }
	steps := []struct{ do, undo func() error }{
		{inNode("link", "add", v.bridge, "type", "bridge"), inNode("link", "delete", v.bridge)},
		{inNode("addr", "add", v.nodeIP+"/24", "dev", v.bridge), nil},
		{inNode("link", "set", v.bridge, "up"), nil},
		// Made on the host and moved: the namespaces' processes number pids as the node's PID namespace does.
		{hostIP("link", "add", v.nodeLink, "type", "veth", "peer", "name", "vlan0", "netns", strconv.Itoa(hosts.PID())), nil},
		{hostIP("link", "set", v.nodeLink, "netns", strconv.Itoa(node.PID())), nil},
		{inNode("link", "set", v.nodeLink, "master", v.bridge, "up"), nil},
		{inHosts("addr", "add", v.client+"/24", "dev", "vlan0"), nil},
	}
	for _, r := range v.routers {
		steps = append(steps, struct{ do, undo func() error }{inHosts("addr", "add", r+"/32", "dev", "vlan0"), nil})
	}
	steps = append(steps, []struct{ do, undo func() error }{
		{inHosts("link", "set", "vlan0", "up"), nil},
		{inHosts("link", "set", "lo", "up"), nil},
		{inHosts("route", "add", "default", "via", v.nodeIP), nil},
		// The hosted cluster's API server serves on the host's end of the node's link: its answers to the VLAN go
		// back through the node, on a route that goes with that link.
		{hostIP("route", "add", v.cidr, "via", devcluster.NodeIP), hostIP("route", "del", v.cidr, "via", devcluster.NodeIP)},
	}...)
	for _, s := range steps {
		if err := s.do(); err != nil {
			return nil, errors.Join(err, undo.run())
		}
		if s.undo != nil {
			undo = append(undo, s.undo)
		}
	}
	// CoreDNS's answers to VLAN clients leave the Pods' bridge for the VLAN's.
	allowed, err := cluster.AllowPodsTo(v.bridge)
	if err != nil {
		return nil, errors.Join(err, undo.run())
	}
	undo = append(undo, allowed)
	v.hosts = hosts
	return undo.run, nil
}

// hostIP runs ip on the host, for the route back to the VLAN; undoing it once the node (and its link) is gone is
// nothing to do.
func hostIP(args ...string) func() error {
	return func() error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil && (args[1] != "del" || !strings.Contains(string(out), "No such")) {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
}

// InVLAN runs a command on the VLAN client.
func InVLAN(ctx context.Context, args ...string) (string, error) { return vlans[0].run(ctx, args...) }

// InOtherVLAN runs a command on the other VLAN's client.
func InOtherVLAN(ctx context.Context, args ...string) (string, error) {
	return vlans[1].run(ctx, args...)
}

func (v *vlan) run(ctx context.Context, args ...string) (string, error) {
	if v.hosts == nil {
		return "", errors.New("localenv: no VLAN is set up")
	}
	out, err := v.hosts.Command(ctx, args[0], args[1:]...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// DigArgs asks server at port for name's A records, answers only.
func DigArgs(server, port, name string) []string {
	return []string{"dig", "+short", "+time=1", "+tries=1", "-p", port, "@" + server, name, "A"}
}

// DigStatusArgs asks server at port for name's A records and prints only the answer's status ("status: REFUSED").
func DigStatusArgs(server, port, name string) []string {
	return []string{"sh", "-c", "dig +time=1 +tries=1 +noall +comments -p " + port + " @" + server + " " + name +
		" A | grep -o 'status: [A-Z]*'"}
}

// SubjectArgs connects to addr with SNI name (openssl s_client) and prints the certificate's subject.
func SubjectArgs(addr, name string) []string {
	return []string{"sh", "-c", "openssl s_client -connect " + addr + " -servername " + name +
		" </dev/null 2>/dev/null | openssl x509 -noout -subject"}
}

// RouterSourcePath is the path a VLAN router answers with the address the request came from: which of its
// addresses (which leg) a proxy reached it by.
const RouterSourcePath = "/source"

// StartVLANRouter stands for the hosted cluster's router on a MetalLB address of a VLAN (one of its routers): TLS on
// 443 with a certificate whose common name is cn for every name below appsDomain, HTTP on 80 answering cn (and its
// client's address on RouterSourcePath).
func StartVLANRouter(ip, cn, appsDomain string) (stop func(), err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		DNSNames: []string{"*." + appsDomain}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == RouterSourcePath {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			fmt.Fprint(w, host)
			return
		}
		fmt.Fprint(w, cn)
	})
	i := slices.IndexFunc(vlans, func(v *vlan) bool { return slices.Contains(v.routers, ip) })
	if i < 0 || vlans[i].hosts == nil {
		return nil, fmt.Errorf("localenv: no VLAN with a router at %s is set up", ip)
	}
	hosts := vlans[i].hosts
	rawTLS, err := hosts.Listen("tcp", net.JoinHostPort(ip, "443"))
	if err != nil {
		return nil, err
	}
	tlsLn := tls.NewListener(rawTLS, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	httpLn, err := hosts.Listen("tcp", net.JoinHostPort(ip, "80"))
	if err != nil {
		_ = tlsLn.Close()
		return nil, err
	}
	var servers []*http.Server
	for _, ln := range []net.Listener{tlsLn, httpLn} {
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
		servers = append(servers, srv)
		go func() { _ = srv.Serve(ln) }()
	}
	return func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}, nil
}

// VLAN pools: one MetalLB address each, so that moving an AppsIngress between them changes its address. C is on the
// other VLAN.
const (
	VLANPoolA = "vlan-a"
	VLANPoolB = "vlan-b"
	VLANPoolC = "vlan-c"
)

// CreateVLANPools creates VLANPoolA (RouterA), VLANPoolB (RouterB) and VLANPoolC (RouterC) in the hosted cluster.
func (e *Env) CreateVLANPools(ctx context.Context) error {
	for name, ip := range map[string]string{VLANPoolA: RouterA, VLANPoolB: RouterB, VLANPoolC: RouterC} {
		if err := e.createPool(ctx, name, ip+"/32"); err != nil {
			return err
		}
	}
	return nil
}

// CreateVLANAppsIngress creates the AppsIngress of cluster name on a VLAN: its clients in cidr (NodeVLANCIDR or
// OtherVLANCIDR), its router's ports 80 and 443, its address from pool.
func (e *Env) CreateVLANAppsIngress(ctx context.Context, name, pool, cidr string) error {
	ai := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hostedcluster.virtual-ingress.io/v1alpha1", "kind": "AppsIngress",
		"metadata": map[string]any{"name": name, "namespace": ClustersNS},
		"spec": map[string]any{
			"hostedClusterRef": map[string]any{"name": HostedName},
			"clusterName":      name,
			"baseDomain":       BaseDomain,
			"service":          map[string]any{"name": name + "-apps", "ports": map[string]any{"http": int64(80), "https": int64(443)}},
			"metallb":          map[string]any{"addressPoolName": pool},
			"dns":              map[string]any{"vlanCIDRs": []any{cidr}},
		},
	}}
	_, err := e.MgmtDyn.Resource(AppsIngressGVR).Namespace(ClustersNS).Create(ctx, ai, metav1.CreateOptions{})
	return err
}

// SetPool moves the AppsIngress name to pool.
func (e *Env) SetPool(ctx context.Context, name, pool string) error {
	patch := fmt.Sprintf(`{"spec":{"metallb":{"addressPoolName":%q}}}`, pool)
	_, err := e.MgmtDyn.Resource(AppsIngressGVR).Namespace(ClustersNS).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}
