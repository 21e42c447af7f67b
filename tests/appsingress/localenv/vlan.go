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
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
)

// The "VLAN" of the node tier and its benchmark: a bridge on this machine with the address a VLAN-attached node has
// there, the MetalLB addresses the hosted cluster's router answers on, and a network namespace holding a VLAN client.
// Nothing is routed off the machine: every address is in the benchmarking range, on links created here and deleted
// by the returned function.
const (
	VLANBridge     = "vi-vlan0"
	VLANClientNS   = "vi-vlan-client"
	vlanClientLink = "vi-vlanc0"
	NodeVLANCIDR   = "198.19.10.0/24"
	VLANNodeIP     = "198.19.10.1"
	NodeVLANClient = "198.19.10.5"
	RouterA        = "198.19.10.100"
	RouterB        = "198.19.10.101"
)

// SetUpVLAN creates the VLAN and lets the node's Pods answer its clients; the returned function undoes it all.
func SetUpVLAN(cluster *devcluster.Cluster) (func() error, error) {
	var undo []func() error
	undoAll := func() error {
		var errs []error
		for i := len(undo) - 1; i >= 0; i-- {
			errs = append(errs, undo[i]())
		}
		return errors.Join(errs...)
	}
	ip := func(args ...string) func() error {
		return func() error {
			if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
				return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
			}
			return nil
		}
	}
	steps := []struct{ do, undo func() error }{
		{ip("link", "add", VLANBridge, "type", "bridge"), ip("link", "delete", VLANBridge)},
		{ip("addr", "add", VLANNodeIP+"/24", "dev", VLANBridge), nil},
		{ip("addr", "add", RouterA+"/32", "dev", VLANBridge), nil},
		{ip("addr", "add", RouterB+"/32", "dev", VLANBridge), nil},
		{ip("link", "set", VLANBridge, "up"), nil},
		{ip("netns", "add", VLANClientNS), ip("netns", "delete", VLANClientNS)},
		{ip("link", "add", vlanClientLink, "type", "veth", "peer", "name", "vlan0", "netns", VLANClientNS), ip("link", "delete", vlanClientLink)},
		{ip("link", "set", vlanClientLink, "master", VLANBridge, "up"), nil},
		{ip("-n", VLANClientNS, "addr", "add", NodeVLANClient+"/24", "dev", "vlan0"), nil},
		{ip("-n", VLANClientNS, "link", "set", "vlan0", "up"), nil},
		{ip("-n", VLANClientNS, "link", "set", "lo", "up"), nil},
		{ip("-n", VLANClientNS, "route", "add", "default", "via", VLANNodeIP), nil},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return nil, errors.Join(err, undoAll())
		}
		if s.undo != nil {
			undo = append(undo, s.undo)
		}
	}
	// CoreDNS's answers to VLAN clients leave the Pods' bridge for the VLAN's.
	allowed, err := cluster.AllowPodsTo(VLANBridge)
	if err != nil {
		return nil, errors.Join(err, undoAll())
	}
	undo = append(undo, allowed)
	return undoAll, nil
}

// InVLAN runs a command in the VLAN client's namespace.
func InVLAN(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", VLANClientNS}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// DigArgs asks server at port for name's A records, answers only.
func DigArgs(server, port, name string) []string {
	return []string{"dig", "+short", "+time=1", "+tries=1", "-p", port, "@" + server, name, "A"}
}

// SubjectArgs connects to addr with SNI name (openssl s_client) and prints the certificate's subject.
func SubjectArgs(addr, name string) []string {
	return []string{"sh", "-c", "openssl s_client -connect " + addr + " -servername " + name +
		" </dev/null 2>/dev/null | openssl x509 -noout -subject"}
}

// StartVLANRouter stands for the hosted cluster's router on a MetalLB address of the VLAN: TLS on 443 with a
// certificate whose common name is cn for every name below appsDomain, HTTP on 80 answering cn.
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
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, cn) })
	tlsLn, err := tls.Listen("tcp", net.JoinHostPort(ip, "443"), &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		return nil, err
	}
	httpLn, err := net.Listen("tcp", net.JoinHostPort(ip, "80"))
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

// VLAN pools: one MetalLB address each, so that moving an AppsIngress between them changes its address.
const (
	VLANPoolA = "vlan-a"
	VLANPoolB = "vlan-b"
)

// CreateVLANPools creates VLANPoolA (RouterA) and VLANPoolB (RouterB) in the hosted cluster.
func (e *Env) CreateVLANPools(ctx context.Context) error {
	for name, ip := range map[string]string{VLANPoolA: RouterA, VLANPoolB: RouterB} {
		if err := e.createPool(ctx, name, ip+"/32"); err != nil {
			return err
		}
	}
	return nil
}

// CreateVLANAppsIngress creates the AppsIngress of cluster name on the VLAN: its clients in NodeVLANCIDR, its
// router's ports 80 and 443, its address from pool.
func (e *Env) CreateVLANAppsIngress(ctx context.Context, name, pool string) error {
	ai := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hostedcluster.virtual-ingress.io/v1alpha1", "kind": "AppsIngress",
		"metadata": map[string]any{"name": name, "namespace": ClustersNS},
		"spec": map[string]any{
			"hostedClusterRef": map[string]any{"name": HostedName},
			"clusterName":      name,
			"baseDomain":       BaseDomain,
			"service":          map[string]any{"name": name + "-apps", "ports": map[string]any{"http": int64(80), "https": int64(443)}},
			"metallb":          map[string]any{"addressPoolName": pool},
			"dns":              map[string]any{"vlanCIDRs": []any{NodeVLANCIDR}},
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
