//go:build node

package node_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
)

// The "VLAN": a bridge on this machine with the address a VLAN-attached node has there, the MetalLB addresses the
// hosted cluster's router answers on, and a network namespace holding a VLAN client. Nothing is routed off the
// machine: every address is in the benchmarking range, on links this test creates and deletes.
const (
	vlanBridge     = "vi-vlan0"
	vlanClientNS   = "vi-vlan-client"
	vlanClientLink = "vi-vlanc0"
	vlanCIDR       = "198.19.10.0/24"
	vlanNodeIP     = "198.19.10.1"
	vlanClientIP   = "198.19.10.5"
	routerA        = "198.19.10.100"
	routerB        = "198.19.10.101"
)

// setUpVLAN creates the VLAN and lets the Pods answer its clients; everything is undone when the test ends.
func setUpVLAN(t *testing.T) {
	t.Helper()
	var undo []func() error
	t.Cleanup(func() {
		for i := len(undo) - 1; i >= 0; i-- {
			if err := undo[i](); err != nil {
				t.Error(err)
			}
		}
	})
	ip := func(args ...string) func() error {
		return func() error {
			if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
				return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
			}
			return nil
		}
	}
	steps := []struct{ do, undo func() error }{
		{ip("link", "add", vlanBridge, "type", "bridge"), ip("link", "delete", vlanBridge)},
		{ip("addr", "add", vlanNodeIP+"/24", "dev", vlanBridge), nil},
		{ip("addr", "add", routerA+"/32", "dev", vlanBridge), nil},
		{ip("addr", "add", routerB+"/32", "dev", vlanBridge), nil},
		{ip("link", "set", vlanBridge, "up"), nil},
		{ip("netns", "add", vlanClientNS), ip("netns", "delete", vlanClientNS)},
		{ip("link", "add", vlanClientLink, "type", "veth", "peer", "name", "vlan0", "netns", vlanClientNS), ip("link", "delete", vlanClientLink)},
		{ip("link", "set", vlanClientLink, "master", vlanBridge, "up"), nil},
		{ip("-n", vlanClientNS, "addr", "add", vlanClientIP+"/24", "dev", "vlan0"), nil},
		{ip("-n", vlanClientNS, "link", "set", "vlan0", "up"), nil},
		{ip("-n", vlanClientNS, "link", "set", "lo", "up"), nil},
		{ip("-n", vlanClientNS, "route", "add", "default", "via", vlanNodeIP), nil},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatal(err)
		}
		if s.undo != nil {
			undo = append(undo, s.undo)
		}
	}
	// CoreDNS's answers to VLAN clients leave the Pods' bridge for the VLAN's.
	allowed, err := node.Cluster.AllowPodsTo(vlanBridge)
	if err != nil {
		t.Fatal(err)
	}
	undo = append(undo, allowed)
}

// inVLAN runs a command in the VLAN client's namespace.
func inVLAN(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", vlanClientNS}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// digArgs asks server (host:port) for name's A records, answers only.
func digArgs(server, port, name string) []string {
	return []string{"dig", "+short", "+time=1", "+tries=1", "-p", port, "@" + server, name, "A"}
}

// subjectArgs connects to addr with SNI name (openssl s_client) and prints the certificate's subject.
func subjectArgs(addr, name string) []string {
	return []string{"sh", "-c", "openssl s_client -connect " + addr + " -servername " + name +
		" </dev/null 2>/dev/null | openssl x509 -noout -subject"}
}

// startRouter stands for the hosted cluster's router on a MetalLB address of the VLAN: TLS on 443 with a certificate
// whose common name is cn for every *.apps name, HTTP on 80 answering cn.
func startRouter(t *testing.T, ip, cn, appsDomain string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		DNSNames: []string{"*." + appsDomain}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, cn) })
	tlsLn, err := tls.Listen("tcp", net.JoinHostPort(ip, "443"), &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		t.Fatal(err)
	}
	httpLn, err := net.Listen("tcp", net.JoinHostPort(ip, "80"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ln := range []net.Listener{tlsLn, httpLn} {
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
	}
}

// probeImage is a Pod image with the clients users debug with: dig, openssl and curl (Debian's, with busybox's sh).
const probeImage = "localhost/appsingress/netprobe:1"

func importProbeImage(t *testing.T) {
	t.Helper()
	files := map[string]string{"/bin/busybox": "/bin/busybox"}
	for _, bin := range []string{"dig", "openssl", "curl"} {
		path, err := exec.LookPath(bin)
		if err != nil {
			t.Fatalf("%s is not installed (make debian-packages installs it as root): %v", bin, err)
		}
		files["/usr/bin/"+bin] = path
	}
	if err := node.Cluster.BuildHostImage(context.Background(), devcluster.HostImage{
		Ref: probeImage, Files: files, User: "65532:65532",
		Links: map[string]string{"/bin/sh": "busybox", "/bin/sleep": "busybox"},
	}); err != nil {
		t.Fatal(err)
	}
}

// runProbePod starts a Pod of probeImage in namespace and returns its name once it runs.
func runProbePod(t *testing.T, namespace string) string {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "netprobe", Namespace: namespace},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "probe", Image: probeImage, ImagePullPolicy: corev1.PullNever,
				Command: []string{"/bin/sleep", "3600"},
			}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	if _, err := node.Kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nodetier.Eventually(t, time.Minute, "the probe Pod running", func() (bool, string, error) {
		p, err := node.Kube.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase), nil
	})
	return pod.Name
}
