package main

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
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/proxy"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/coredns"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/haproxy"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

var appsIngressGVR = v1alpha1.GroupVersion.WithResource("appsingresses")

// ports of the local DNS, proxy and router stand-in.
type ports struct{ dns, http, https, api, routerHTTPS, routerHTTP int }

func run(ctx context.Context, o options) (*results, error) {
	dir, err := os.MkdirTemp("", "appsingress-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	e, err := startEnv(ctx, dir)
	defer e.stop()
	if err != nil {
		return nil, err
	}
	var p ports
	for _, ptr := range []*int{&p.dns, &p.http, &p.https, &p.api, &p.routerHTTPS, &p.routerHTTP} {
		if *ptr, err = localproc.FreePort(); err != nil {
			return nil, err
		}
	}
	dnsOpts := dns.Options{Port: p.dns, ProxyIPs: []netip.Addr{netip.MustParseAddr(proxyIP)}}
	proxyOpts := proxy.Options{BindAddress: proxyIP, HTTPPort: p.http, HTTPSPort: p.https, APIPort: p.api}
	dnsAddr := net.JoinHostPort(proxyIP, strconv.Itoa(p.dns))
	srv, err := coredns.Start(ctx, dir, dns.Render(dnsOpts, nil), dnsAddr)
	if err != nil {
		return nil, err
	}
	e.stops = append(e.stops, func() { _ = srv.Stop() })
	hap, err := haproxy.Start(dir, proxy.Render(proxyOpts, nil), net.JoinHostPort(proxyIP, strconv.Itoa(p.https)))
	if err != nil {
		return nil, err
	}
	e.stops = append(e.stops, func() { _ = hap.Stop() })
	stopRouter, err := startRouter(p.routerHTTPS)
	if err != nil {
		return nil, err
	}
	e.stops = append(e.stops, stopRouter)

	op, err := startOperator(ctx, dir, e.mgmt.Kubeconfig(), p)
	if err != nil {
		return nil, err
	}
	e.stops = append(e.stops, func() { _ = op.Stop() })

	// Observers: the IP on the hosted Service (watch), the ConfigMap holding it, the files served.
	ipSeen := newStamps()
	watchCtx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	if err := watchIPs(watchCtx, e, ipSeen); err != nil {
		return nil, err
	}
	cmSeen := newStamps()
	go syncConfig(watchCtx, e, srv, hap, cmSeen)

	names := make([]string, o.clusters)
	for i := range names {
		names[i] = fmt.Sprintf("b%03d", i)
	}
	start := time.Now()
	for _, n := range names {
		if err := createAppsIngress(ctx, e, n, p); err != nil {
			return nil, err
		}
	}
	allReady, err := waitAllReady(ctx, e, o.clusters)
	if err != nil {
		return nil, fmt.Errorf("%w\noperator log:\n%s", err, op.Logs())
	}
	res := &results{Clusters: o.clusters, AllReadySeconds: allReady.Sub(start).Seconds()}

	var mu sync.Mutex
	var toCM, toDNS, toProxy []time.Duration
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var firstErr error
	for _, n := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ip, at := ipSeen.get(n + "-apps")
			if at.IsZero() {
				return
			}
			cmAt := cmSeen.wait(ip)
			dnsAt, err := waitDNS(ctx, dnsAddr, "x.apps."+n+"."+baseDomain, ip)
			if err == nil {
				var proxyAt time.Time
				proxyAt, err = waitProxy(ctx, p.https, "x.apps."+n+"."+baseDomain, ip)
				mu.Lock()
				toProxy = append(toProxy, proxyAt.Sub(at))
				mu.Unlock()
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("%s: %w", n, err)
			}
			toCM = append(toCM, cmAt.Sub(at))
			toDNS = append(toDNS, dnsAt.Sub(at))
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	res.IPToConfigMap, res.IPToDNS, res.IPToProxy = summarise(toCM), summarise(toDNS), summarise(toProxy)
	res.OperatorPeakRSSMiB = peakRSS(op.PID())
	res.RenderSeconds, res.CorefileBytes, res.HAProxyBytes, err = renderTime(ctx, e, dnsOpts, proxyOpts)
	return res, err
}

// stamps records when a key was first seen with a value.
type stamps struct {
	mu   sync.Mutex
	at   map[string]time.Time
	val  map[string]string
	cond *sync.Cond
}

func newStamps() *stamps {
	s := &stamps{at: map[string]time.Time{}, val: map[string]string{}}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *stamps) set(key, val string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.at[key]; !ok {
		s.at[key], s.val[key] = at, val
		s.cond.Broadcast()
	}
}

func (s *stamps) get(key string) (string, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.val[key], s.at[key]
}

func (s *stamps) wait(key string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.at[key].IsZero() {
		s.cond.Wait()
	}
	return s.at[key]
}

func watchIPs(ctx context.Context, e *env, seen *stamps) error {
	w, err := e.hostedKube.CoreV1().Services(routerNS).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			svc, ok := ev.Object.(*corev1.Service)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			if ing := svc.Status.LoadBalancer.Ingress; len(ing) > 0 && ing[0].IP != "" {
				seen.set(svc.Name, ing[0].IP, time.Now())
			}
		}
	}()
	return nil
}

// syncConfig copies the ConfigMaps into CoreDNS's and HAProxy's files as a kubelet would (every 100ms here),
// reloading HAProxy; it stamps each IP the DNS ConfigMap holds when first seen.
func syncConfig(ctx context.Context, e *env, srv *coredns.Server, hap *haproxy.Proxy, cmSeen *stamps) {
	var lastDNS, lastProxy string
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if cm, err := e.mgmtKube.CoreV1().ConfigMaps(operatorNS).Get(ctx, dnsMap, metav1.GetOptions{}); err == nil {
			now := time.Now()
			if s := cm.Data[controller.CorefileKey]; s != lastDNS {
				for _, line := range strings.Split(s, "\n") {
					// answer "{{ .Name }} 30 IN A 127.20.0.1" in a VLAN view block carries an external IP.
					if i := strings.Index(line, " IN A 127.20."); i >= 0 {
						cmSeen.set(strings.TrimSuffix(line[i+len(" IN A "):], `"`), "", now)
					}
				}
				if srv.Update(s) == nil {
					lastDNS = s
				}
			}
		}
		if cm, err := e.mgmtKube.CoreV1().ConfigMaps(operatorNS).Get(ctx, proxyMap, metav1.GetOptions{}); err == nil {
			if s := cm.Data[controller.HAProxyKey]; s != lastProxy {
				if hap.Reload(s) == nil {
					lastProxy = s
				}
			}
		}
	}
}

func createAppsIngress(ctx context.Context, e *env, name string, p ports) error {
	ai := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hostedcluster.virtual-ingress.io/v1alpha1", "kind": "AppsIngress",
		"metadata": map[string]any{"name": name, "namespace": clustersNS},
		"spec": map[string]any{
			"hostedClusterRef": map[string]any{"name": hostedName},
			"clusterName":      name,
			"baseDomain":       baseDomain,
			"service":          map[string]any{"name": name + "-apps", "ports": map[string]any{"http": int64(p.routerHTTP), "https": int64(p.routerHTTPS)}},
			"metallb":          map[string]any{"addressPoolName": poolName},
			"dns":              map[string]any{"vlanCIDRs": []any{vlanCIDR}},
		},
	}}
	_, err := e.mgmtDyn.Resource(appsIngressGVR).Namespace(clustersNS).Create(ctx, ai, metav1.CreateOptions{})
	return err
}

func waitAllReady(ctx context.Context, e *env, n int) (time.Time, error) {
	var ready int
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := e.mgmtDyn.Resource(appsIngressGVR).Namespace(clustersNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready = 0
		for _, it := range list.Items {
			if phase, _, _ := unstructured.NestedString(it.Object, "status", "phase"); phase == "Ready" {
				ready++
			}
		}
		return ready == n, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("%d of %d AppsIngresses Ready: %w", ready, n, err)
	}
	return time.Now(), nil
}

func waitDNS(ctx context.Context, server, name, ip string) (time.Time, error) {
	var at time.Time
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		if got, err := lookupA(server, vlanClient, name); err == nil && got == ip {
			at = time.Now()
			return true, nil
		}
		return false, nil
	})
	return at, err
}

func lookupA(server, src, name string) (string, error) {
	conn, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(src)}, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(server)))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	msg := dnsmessage.Message{Header: dnsmessage.Header{ID: 7}, Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName(name + "."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}}}
	packed, err := msg.Pack()
	if err != nil {
		return "", err
	}
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write(packed); err != nil {
		return "", err
	}
	buf := make([]byte, 1500)
	n, err := conn.Read(buf)
	if err != nil {
		return "", err
	}
	var resp dnsmessage.Message
	if err := resp.Unpack(buf[:n]); err != nil {
		return "", err
	}
	for _, a := range resp.Answers {
		if r, ok := a.Body.(*dnsmessage.AResource); ok {
			return netip.AddrFrom4(r.A).String(), nil
		}
	}
	return "", nil
}

func waitProxy(ctx context.Context, port int, sni, ip string) (time.Time, error) {
	var at time.Time
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", net.JoinHostPort(proxyIP, strconv.Itoa(port)),
			&tls.Config{ServerName: sni, InsecureSkipVerify: true}) //nolint:gosec // the stand-in router's self-signed certificate
		if err != nil {
			return false, nil
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
		fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", sni)
		body, _ := io.ReadAll(conn)
		if strings.Contains(string(body), "local "+ip+":") {
			at = time.Now()
			return true, nil
		}
		return false, nil
	})
	return at, err
}

// startRouter listens on every loopback address at port with TLS and answers with the address that was dialled,
// so a response proves which external IP HAProxy forwarded to.
func startRouter(port int) (func(), error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "router"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
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
			fmt.Fprintf(w, "local %s", r.Context().Value(http.LocalAddrContextKey))
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}

func startOperator(ctx context.Context, dir, kubeconfig string, p ports) (*localproc.Process, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "apps-ingress-operator")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/apps-ingress-operator")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the operator: %v\n%s", err, out)
	}
	return localproc.Start("apps-ingress-operator", filepath.Join(dir, "operator.log"), []string{"KUBECONFIG=" + kubeconfig}, bin,
		"--namespace="+operatorNS, "--dns-config-map="+dnsMap, "--proxy-config-map="+proxyMap, "--proxy-ips="+proxyIP,
		"--secret-namespaces="+clustersNS, "--dns-port="+strconv.Itoa(p.dns), "--dns-health-address=", "--dns-ready-address=",
		"--proxy-http-port="+strconv.Itoa(p.http), "--proxy-https-port="+strconv.Itoa(p.https), "--proxy-api-port="+strconv.Itoa(p.api),
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--leader-elect=false", "--log-level=error")
}

// peakRSS is a process's VmHWM in MiB.
func peakRSS(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// renderTime renders every Ready cluster's entries the way the operator does, 20 times, and returns the mean.
func renderTime(ctx context.Context, e *env, dnsOpts dns.Options, proxyOpts proxy.Options) (float64, int, int, error) {
	list, err := e.mgmtDyn.Resource(appsIngressGVR).Namespace(clustersNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, 0, err
	}
	var clusters []routes.Cluster
	for _, it := range list.Items {
		ips, _, _ := unstructured.NestedStringSlice(it.Object, "status", "externalIPs")
		api, _, _ := unstructured.NestedString(it.Object, "status", "apiEndpoint")
		c := routes.Cluster{Key: it.GetNamespace() + "/" + it.GetName(), Name: it.GetName(), BaseDomain: baseDomain,
			HTTPPort: 80, HTTPSPort: 443, VLANCIDRs: []netip.Prefix{netip.MustParsePrefix(vlanCIDR)}, APIEndpoint: api}
		for _, s := range ips {
			c.ExternalIPs = append(c.ExternalIPs, netip.MustParseAddr(s))
		}
		clusters = append(clusters, c)
	}
	const rounds = 20
	var corefile, cfg string
	start := time.Now()
	for range rounds {
		corefile, cfg = dns.Render(dnsOpts, clusters), proxy.Render(proxyOpts, clusters)
	}
	return time.Since(start).Seconds() / rounds, len(corefile), len(cfg), nil
}
