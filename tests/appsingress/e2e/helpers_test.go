//go:build e2e

package e2e_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes/routestest"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/coredns"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

func mgmtClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(mgmt.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func hostedKubeconfig(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(hostedCl.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// putKubeconfigSecret creates or replaces the Secret HyperShift would publish.
func putKubeconfigSecret(t *testing.T, name string, kubeconfig []byte) {
	t.Helper()
	ctx := context.Background()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: clustersNS, Name: name}, Data: map[string][]byte{"kubeconfig": kubeconfig}}
	_, err := mgmtKube.CoreV1().Secrets(clustersNS).Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = mgmtKube.CoreV1().Secrets(clustersNS).Update(ctx, s, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// createHostedCluster creates a HostedCluster whose status names kubeconfigSecret and apiEndpoint (host:port).
func createHostedCluster(t *testing.T, name, kubeconfigSecret, apiEndpoint string) {
	t.Helper()
	if err := env.CreateHostedCluster(context.Background(), name, kubeconfigSecret, apiEndpoint); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = mgmtDyn.Resource(localenv.HostedClusterGVR).Namespace(clustersNS).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

func newAppsIngress(name, cluster, pool string) *v1alpha1.AppsIngress {
	return &v1alpha1.AppsIngress{
		ObjectMeta: metav1.ObjectMeta{Namespace: clustersNS, Name: name},
		Spec: v1alpha1.AppsIngressSpec{
			HostedClusterRef: v1alpha1.HostedClusterRef{Name: cluster},
			BaseDomain:       baseDomain,
			Service: v1alpha1.ServiceSpec{
				Namespace: routerNS,
				Ports:     v1alpha1.ServicePorts{HTTP: svcHTTP, HTTPS: svcHTTPS},
			},
			MetalLB: v1alpha1.MetalLBSpec{AddressPoolName: pool, IPAddressPoolRanges: []string{poolARange, poolBRange}},
			DNS:     v1alpha1.DNSSpec{VLANCIDRs: []string{vlanCIDR}},
		},
	}
}

// createAppsIngress gives cluster name a kubeconfig Secret and a HostedCluster pointing at the hosted devcluster, and
// creates the AppsIngress of the same name (newAppsIngress with pool, then mutate, when given).
func createAppsIngress(t *testing.T, name, pool string, mutate func(*v1alpha1.AppsIngress)) {
	t.Helper()
	putKubeconfigSecret(t, name+"-admin-kubeconfig", hostedKubeconfig(t))
	createHostedCluster(t, name, name+"-admin-kubeconfig", env.HostedAPIEndpoint())
	ai := newAppsIngress(name, name, pool)
	if mutate != nil {
		mutate(ai)
	}
	if err := mgmtClient(t).Create(context.Background(), ai); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls the AppsIngress until cond holds, and fails the test with its last status otherwise.
func waitFor(t *testing.T, c client.Client, key types.NamespacedName, what string, timeout time.Duration, cond func(*v1alpha1.AppsIngress) bool) *v1alpha1.AppsIngress {
	t.Helper()
	var last *v1alpha1.AppsIngress
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ai := &v1alpha1.AppsIngress{}
		if err := c.Get(ctx, key, ai); err != nil {
			return false, nil
		}
		last = ai
		return cond(ai), nil
	})
	if err != nil {
		if last != nil {
			var conditions []string
			for _, c := range last.Status.Conditions {
				conditions = append(conditions, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
			}
			t.Fatalf("%s: %s not reached; generation %d observed %d, phase %s reason %s: %s; externalIPs %v; conditions:\n  %s",
				key, what, last.Generation, last.Status.ObservedGeneration, last.Status.Phase, last.Status.Reason, last.Status.Message,
				last.Status.ExternalIPs, strings.Join(conditions, "\n  "))
		}
		t.Fatalf("%s: %s not reached: %v", key, what, err)
	}
	return last
}

func phaseIs(phase v1alpha1.Phase, reason string) func(*v1alpha1.AppsIngress) bool {
	return func(ai *v1alpha1.AppsIngress) bool {
		return ai.Status.ObservedGeneration == ai.Generation && ai.Status.Phase == phase && (reason == "" || ai.Status.Reason == reason)
	}
}

// lookup asks the suite's CoreDNS for name from source address src; it returns the rcode and the A/AAAA answers.
func lookup(t *testing.T, src, name string, qtype dnsmessage.Type) (dnsmessage.RCode, []netip.Addr) {
	t.Helper()
	return lookupAt(t, dnsServer, dnsAddr, src, name, qtype)
}

// lookupAt asks the CoreDNS server listening at addr.
func lookupAt(t *testing.T, server *coredns.Server, addr, src, name string, qtype dnsmessage.Type) (dnsmessage.RCode, []netip.Addr) {
	t.Helper()
	laddr := &net.UDPAddr{IP: net.ParseIP(src)}
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialUDP("udp", laddr, raddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msg := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: 4242, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName(name + "."), Type: qtype, Class: dnsmessage.ClassINET}},
	}
	packed, err := msg.Pack()
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := conn.Write(packed); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1500)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no DNS answer for %s from %s: %v\n%s", name, src, err, server.Logs())
	}
	var resp dnsmessage.Message
	if err := resp.Unpack(buf[:n]); err != nil {
		t.Fatal(err)
	}
	var out []netip.Addr
	for _, a := range resp.Answers {
		switch b := a.Body.(type) {
		case *dnsmessage.AResource:
			out = append(out, netip.AddrFrom4(b.A))
		case *dnsmessage.AAAAResource:
			out = append(out, netip.AddrFrom16(b.AAAA))
		}
	}
	return resp.RCode, out
}

// waitDNS polls until name, asked from src, answers exactly want (nil: NXDOMAIN/REFUSED/empty); CoreDNS applies a
// changed Corefile within its reload interval.
func waitDNS(t *testing.T, src, name string, want []string) {
	t.Helper()
	var got []netip.Addr
	var rcode dnsmessage.RCode
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		rcode, got = lookup(t, src, name, dnsmessage.TypeA)
		return fmt.Sprint(addrStrings(got)) == fmt.Sprint(want), nil
	})
	if err != nil {
		t.Fatalf("DNS %s from %s: got %v (rcode %v), want %v\n%s", name, src, got, rcode, want, dnsServer.Files())
	}
}

// waitRefused waits until CoreDNS answers REFUSED, with no address, to src asking name.
func waitRefused(t *testing.T, src, name string) {
	t.Helper()
	var got []netip.Addr
	var rcode dnsmessage.RCode
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		rcode, got = lookup(t, src, name, dnsmessage.TypeA)
		return rcode == dnsmessage.RCodeRefused && len(got) == 0, nil
	})
	if err != nil {
		t.Fatalf("DNS %s from %s: got %v (rcode %v), want REFUSED\n%s", name, src, got, rcode, dnsServer.Files())
	}
}

func addrStrings(as []netip.Addr) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.String())
	}
	return out
}

func readFile(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// router stands in for the hosted cluster's OpenShift router at an external IP: TLS with its own certificate on
// the https port, plain HTTP on the http port, both answering with its name.
type router struct {
	name string
	cert *x509.Certificate
	stop func()
}

func startRouter(t *testing.T, ip, name string) *router {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{"*.apps." + name + "." + baseDomain}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "router %s host %s tls %v", name, r.Host, r.TLS != nil)
	})
	tlsLn, err := tls.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(svcHTTPS)), &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
	})
	if err != nil {
		t.Fatal(err)
	}
	httpLn, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(svcHTTP)))
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := &http.Server{Handler: handler}, &http.Server{Handler: handler}
	go func() { _ = s1.Serve(tlsLn) }()
	go func() { _ = s2.Serve(httpLn) }()
	r := &router{name: name, cert: cert, stop: func() { _ = s1.Close(); _ = s2.Close() }}
	t.Cleanup(r.stop)
	return r
}

// tlsThroughProxy connects to the proxy's port with sni and returns the certificate the far end presented and the
// body of a GET / over that connection.
func tlsThroughProxy(port int, sni string) (*x509.Certificate, string, error) {
	return tlsThroughProxyFrom(podClient, port, sni)
}

// tlsThroughProxyFrom is tlsThroughProxy from the source address src.
func tlsThroughProxyFrom(src string, port int, sni string) (*x509.Certificate, string, error) {
	dialer := &net.Dialer{Timeout: 3 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	conn, err := tls.DialWithDialer(dialer, "tcp", net.JoinHostPort(proxyIP, strconv.Itoa(port)),
		&tls.Config{ServerName: sni, InsecureSkipVerify: true}) //nolint:gosec // the test compares the certificate itself
	if err != nil {
		return nil, "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	cert := conn.ConnectionState().PeerCertificates[0]
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", sni)
	data, _ := io.ReadAll(conn)
	return cert, string(data), nil
}

// waitTLSRoute polls until a TLS connection with sni through the proxy reaches the server with certificate want.
func waitTLSRoute(t *testing.T, port int, sni string, want *x509.Certificate) string {
	t.Helper()
	var lastErr error
	var body string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		cert, b, err := tlsThroughProxy(port, sni)
		if err != nil {
			lastErr = err
			return false, nil
		}
		body = b
		if !cert.Equal(want) {
			lastErr = fmt.Errorf("certificate of %q, want %q's", cert.Subject.CommonName, want.Subject.CommonName)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("TLS %s via proxy port %d: %v\n%s", sni, port, lastErr, proxyFiles(t))
	}
	return body
}

// httpThroughProxy sends GET / with Host host to the proxy's HTTP port.
func httpThroughProxy(host string) (int, string, error) {
	req, _ := http.NewRequest(http.MethodGet, "http://"+net.JoinHostPort(proxyIP, strconv.Itoa(proxyPorts.http))+"/", nil)
	req.Host = host
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// rendered is every file the operator rendered for one server (its main ConfigMap and the shards), as one text.
func rendered(t *testing.T, name string) string {
	t.Helper()
	files, ok, err := localenv.ConfigFiles(context.Background(), mgmtKube, operatorNS, name, localenv.ConfigShards)
	if err != nil || !ok {
		t.Fatalf("reading ConfigMap %s and its shards: %v (all there: %v)", name, err, ok)
	}
	return routestest.Dump(files)
}

// proxyFiles is the files HAProxy was given, for a failure message.
func proxyFiles(t *testing.T) string {
	files, err := haproxyProc.Files()
	if err != nil {
		return err.Error()
	}
	return routestest.Dump(files)
}

func hostedService(t *testing.T, name string) (*corev1.Service, error) {
	t.Helper()
	return hostedKube.CoreV1().Services(routerNS).Get(context.Background(), name, metav1.GetOptions{})
}

func noSyncErrors(t *testing.T) {
	t.Helper()
	if errs := syncErrors.get(); len(errs) > 0 {
		t.Fatalf("CoreDNS or HAProxy refused a render: %v", errs)
	}
}

func conditionStatus(ai *v1alpha1.AppsIngress, typ string) string {
	for _, c := range ai.Status.Conditions {
		if c.Type == typ {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return "missing"
}

var _ = controller.OwnerAnnotation
var _ = strings.Contains
