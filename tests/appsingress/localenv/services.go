package localenv

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
	"maps"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/filesync"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/proxy"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/coredns"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/haproxy"
)

// AppsIngressGVR is the AppsIngress resource.
var AppsIngressGVR = v1alpha1.GroupVersion.WithResource("appsingresses")

// Ports are the loopback ports of CoreDNS, HAProxy's three frontends and the stand-in router (which every
// AppsIngress's Service uses as its ports).
type Ports struct{ DNS, HTTP, HTTPS, API, ProxyStatus, RouterHTTPS, RouterHTTP int }

// Serving are CoreDNS and HAProxy serving the operator's ConfigMaps, and the router stand-in.
type Serving struct {
	Ports     Ports
	DNSAddr   string
	DNS       *coredns.Server
	Proxy     *haproxy.Proxy
	DNSOpts   dns.Options
	ProxyOpts proxy.Options
}

// StartServing starts CoreDNS, HAProxy and the router on free ports, with empty renders.
func (e *Env) StartServing(ctx context.Context) (*Serving, error) {
	s := &Serving{}
	p := &s.Ports
	var err error
	for _, ptr := range []*int{&p.DNS, &p.HTTP, &p.HTTPS, &p.API, &p.ProxyStatus, &p.RouterHTTPS, &p.RouterHTTP} {
		if *ptr, err = localproc.FreePort(); err != nil {
			return nil, err
		}
	}
	configDir := filepath.Join(e.dir, "coredns")
	s.DNSOpts = dns.Options{Port: p.DNS, ProxyIPs: []netip.Addr{netip.MustParseAddr(ProxyIP)}, ZoneDir: configDir, Shards: ConfigShards}
	s.ProxyOpts = proxy.Options{
		BindAddress: ProxyIP, HTTPPort: p.HTTP, HTTPSPort: p.HTTPS, APIPort: p.API,
		StatusPort: p.ProxyStatus, StateDir: haproxy.StateDir(e.dir), Shards: ConfigShards,
	}
	s.DNSAddr = net.JoinHostPort(ProxyIP, strconv.Itoa(p.DNS))
	if s.DNS, err = coredns.Start(ctx, configDir, dns.Render(s.DNSOpts, nil).All(), s.DNSAddr); err != nil {
		return nil, err
	}
	e.OnStop(func() { _ = s.DNS.Stop() })
	if s.Proxy, err = haproxy.Start(e.dir, proxy.Render(s.ProxyOpts, nil).All(), net.JoinHostPort(ProxyIP, strconv.Itoa(p.HTTPS))); err != nil {
		return nil, err
	}
	e.OnStop(func() { _ = s.Proxy.Stop() })
	stop, err := startRouter(p.RouterHTTPS)
	if err != nil {
		return nil, err
	}
	e.OnStop(stop)
	return s, nil
}

// ConfigShards is how many shards the operator in these environments splits its files into: more than one, so that
// the tests, the bench and the demo read a main ConfigMap and its shards as the chart's sidecars do, and enough for
// the bench's 2,000 clusters (about 1.9 KB each of DNS files; a ConfigMap holds 1 MiB).
const ConfigShards = 8

// ConfigFiles is the union of the data of the ConfigMap name and of its shards, as the sidecar writes it into the
// server's directory; ok is false until all of them exist.
func ConfigFiles(ctx context.Context, kube kubernetes.Interface, namespace, name string, shards int) (files map[string]string, ok bool, err error) {
	files = map[string]string{}
	for i := -1; i < shards; i++ {
		n := name
		if i >= 0 {
			n = routes.ShardName(name, i)
		}
		cm, err := kube.CoreV1().ConfigMaps(namespace).Get(ctx, n, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		maps.Copy(files, cm.Data)
	}
	return files, true, nil
}

// SyncConfig copies the ConfigMaps into CoreDNS's and HAProxy's files and reloads HAProxy, as the Pods' sidecar does
// (filesync, watching them), until ctx ends. onDNS, if set, sees each new set of DNS files and when it arrived.
func (e *Env) SyncConfig(ctx context.Context, s *Serving, onDNS func(files map[string]string, at time.Time)) {
	keys := func(name string) []types.NamespacedName {
		return filesync.Options{Namespace: OperatorNS, ConfigMap: name, Shards: ConfigShards}.Keys()
	}
	var lastProxy map[string]string
	go func() {
		_ = filesync.Follow(ctx, e.MgmtKube, keys(ProxyMap), func(files map[string]string) {
			if maps.Equal(files, lastProxy) {
				return
			}
			start := time.Now()
			if err := s.Proxy.Reload(files); err != nil {
				// Retried with the next change; said, since every later route waits for it.
				fmt.Fprintf(os.Stderr, "localenv: HAProxy reload after %s: %v\n", time.Since(start).Round(time.Millisecond), err)
				return
			}
			lastProxy = files
		})
	}()
	var lastDNS map[string]string
	_ = filesync.Follow(ctx, e.MgmtKube, keys(DNSMap), func(files map[string]string) {
		if maps.Equal(files, lastDNS) {
			return
		}
		if onDNS != nil {
			onDNS(files, time.Now())
		}
		if s.DNS.Update(files) == nil {
			lastDNS = files
		}
	})
}

// CreateAppsIngress creates an AppsIngress for the hosted cluster named cluster, its Service named <cluster>-apps.
func (e *Env) CreateAppsIngress(ctx context.Context, cluster string, p Ports) error {
	ai := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hostedcluster.virtual-ingress.io/v1alpha1", "kind": "AppsIngress",
		"metadata": map[string]any{"name": cluster, "namespace": ClustersNS},
		"spec": map[string]any{
			"hostedClusterRef": map[string]any{"name": HostedName},
			"clusterName":      cluster,
			"baseDomain":       BaseDomain,
			// Every AppsIngress here shares one hosted cluster, whose 2,768 node ports would end at 1,384 Services.
			"service": map[string]any{"name": cluster + "-apps", "ports": map[string]any{"http": int64(p.RouterHTTP), "https": int64(p.RouterHTTPS)},
				"allocateLoadBalancerNodePorts": false},
			"metallb": map[string]any{"addressPoolName": PoolName},
			"dns":     map[string]any{"vlanCIDRs": []any{VLANCIDR}},
		},
	}}
	_, err := e.MgmtDyn.Resource(AppsIngressGVR).Namespace(ClustersNS).Create(ctx, ai, metav1.CreateOptions{})
	return err
}

// StartOperator builds cmd/apps-ingress-operator and runs it against the management cluster.
func (e *Env) StartOperator(ctx context.Context, s *Serving) (*localproc.Process, error) {
	bin := filepath.Join(e.dir, "apps-ingress-operator")
	if err := repo.BuildCommand(ctx, "apps-ingress-operator", bin); err != nil {
		return nil, err
	}
	p := s.Ports
	op, err := localproc.Start("apps-ingress-operator", filepath.Join(e.dir, "operator.log"), []string{"KUBECONFIG=" + e.Mgmt.Kubeconfig()}, bin,
		"--namespace="+OperatorNS, "--dns-config-map="+DNSMap, "--proxy-config-map="+ProxyMap, "--proxy-ips="+ProxyIP,
		"--config-shards="+strconv.Itoa(ConfigShards),
		"--secret-namespaces="+ClustersNS, "--dns-port="+strconv.Itoa(p.DNS), "--dns-zone-dir="+s.DNSOpts.ZoneDir, "--dns-health-address=", "--dns-ready-address=",
		"--proxy-http-port="+strconv.Itoa(p.HTTP), "--proxy-https-port="+strconv.Itoa(p.HTTPS), "--proxy-api-port="+strconv.Itoa(p.API),
		"--proxy-status-port="+strconv.Itoa(p.ProxyStatus), "--proxy-state-dir="+s.ProxyOpts.StateDir,
		// No hosted control plane namespaces here: the published endpoints are the way.
		"--control-plane-service=",
		"--dns-replicas="+s.DNSAddr, "--proxy-replicas="+net.JoinHostPort(ProxyIP, strconv.Itoa(p.ProxyStatus)),
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--leader-elect=false", "--log-level=error")
	if err != nil {
		return nil, err
	}
	e.OnStop(func() { _ = op.Stop() })
	return op, nil
}

// LookupA asks server for name's A record from source address src.
func LookupA(server, src, name string) (string, error) {
	resp, err := exchange(server, src, name, dnsmessage.TypeA)
	if err != nil {
		return "", err
	}
	for _, a := range resp.Answers {
		if r, ok := a.Body.(*dnsmessage.AResource); ok {
			return netip.AddrFrom4(r.A).String(), nil
		}
	}
	return "", nil
}

// LookupTXT asks server for name's TXT record and returns its first string ("" without one).
func LookupTXT(server, name string) (string, error) {
	resp, err := exchange(server, "", name, dnsmessage.TypeTXT)
	if err != nil {
		return "", err
	}
	for _, a := range resp.Answers {
		if r, ok := a.Body.(*dnsmessage.TXTResource); ok && len(r.TXT) > 0 {
			return r.TXT[0], nil
		}
	}
	return "", nil
}

// exchange sends server one question of type typ for name over UDP, from source address src (any when empty).
func exchange(server, src, name string, typ dnsmessage.Type) (*dnsmessage.Message, error) {
	var laddr *net.UDPAddr
	if src != "" {
		laddr = &net.UDPAddr{IP: net.ParseIP(src)}
	}
	conn, err := net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(server)))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	msg := dnsmessage.Message{Header: dnsmessage.Header{ID: 7}, Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName(name + "."), Type: typ, Class: dnsmessage.ClassINET}}}
	packed, err := msg.Pack()
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write(packed); err != nil {
		return nil, err
	}
	buf := make([]byte, 1500)
	n, err := conn.Read(buf)
	if err != nil {
		return nil, err
	}
	var resp dnsmessage.Message
	if err := resp.Unpack(buf[:n]); err != nil {
		return nil, err
	}
	return &resp, nil
}

// GetViaProxy opens TLS with sni to HAProxy's https port, sends GET / and returns the certificate seen and the body.
// The router stand-in answers "router <address it was reached at>".
func GetViaProxy(port int, sni string) (*x509.Certificate, string, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", net.JoinHostPort(ProxyIP, strconv.Itoa(port)),
		&tls.Config{ServerName: sni, InsecureSkipVerify: true}) //nolint:gosec // the stand-in router's self-signed certificate is checked by the caller
	if err != nil {
		return nil, "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", sni)
	body, _ := io.ReadAll(conn)
	b := string(body)
	if i := strings.Index(b, "\r\n\r\n"); i >= 0 {
		b = b[i+4:]
	}
	return conn.ConnectionState().PeerCertificates[0], b, nil
}

// startRouter listens on every loopback address at port with TLS (certificate CN "stand-in router") and answers
// with the address that was dialled, so a response proves which external IP HAProxy forwarded to.
func startRouter(port int) (func(), error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stand-in router"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", ":"+strconv.Itoa(port), &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "router %s", r.Context().Value(http.LocalAddrContextKey))
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}
