package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/proxy"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

// Address prefixes of localenv's two MetalLB pools: AppsIngresses are created in the first, measureChanges moves them
// to the second.
const (
	createPoolPrefix = "127.20."
	changePoolPrefix = "127.21."
)

// followGrace is how long the followers may still ask once every cluster is Ready (which says both servers answer).
const followGrace = 30 * time.Second

func run(ctx context.Context, o options) (*results, error) {
	dir, err := os.MkdirTemp("", "appsingress-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	e, err := localenv.Start(ctx, dir)
	defer e.Stop()
	if err != nil {
		return nil, err
	}
	s, err := e.StartServing(ctx)
	if err != nil {
		return nil, err
	}
	op, err := e.StartOperator(ctx, s)
	if err != nil {
		return nil, err
	}

	// Observers: the IP on the hosted Service (watch), the DNS ConfigMap holding it.
	ipSeen, cmSeen := newStamps(), newStamps()
	watchCtx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	if err := watchIPs(watchCtx, e, ipSeen); err != nil {
		return nil, err
	}
	go e.SyncConfig(watchCtx, s, func(files map[string]string, at time.Time) {
		for _, content := range files {
			for _, line := range strings.Split(content, "\n") {
				// "*  30  IN  A  127.20.0.1" in a VLAN zone file carries an external IP.
				if f := strings.Fields(line); len(f) == 5 && f[3] == "A" && strings.HasPrefix(f[4], "127.2") {
					cmSeen.set(f[4], "", at)
				}
			}
		}
	})

	fl, err := measureFloor(ctx, e, o.clusters, ipSeen)
	if err != nil {
		return nil, err
	}
	// Printed now too: a fleet that does not become Ready within --timeout ends the run without its table.
	fmt.Fprintf(os.Stderr, "floor: %d LoadBalancer Services alone: all IPs in %.1fs (create → IP p50 %.3fs, p95 %.3fs)\n",
		fl.Services, fl.AllIPsSeconds, fl.CreateToIP.P50Seconds, fl.CreateToIP.P95Seconds)

	names := make([]string, o.clusters)
	for i := range names {
		names[i] = fmt.Sprintf("b%03d", i)
	}
	followCtx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	fol := follow(followCtx, names, createPoolPrefix, ipSeen, cmSeen, s)
	readySeen := newStamps()
	// Watched from before the first creation, so that an object Ready while others are still being created is seen
	// when it turns Ready, not when the watch starts.
	type readyResult struct {
		at  time.Time
		err error
	}
	readyDone := make(chan readyResult, 1)
	go func() {
		at, err := waitAllReady(ctx, e, o.clusters, readySeen)
		readyDone <- readyResult{at, err}
	}()
	start := time.Now()
	// Created as the floor's Services are, 16 at once: one at a time, the creations alone would spread the burst
	// over seconds that are the client's, not the operator's.
	createdAt := make([]time.Time, len(names))
	if err := fanOut(len(names), func(i int) error {
		err := e.CreateAppsIngress(ctx, names[i], s.Ports)
		createdAt[i] = time.Now()
		return err
	}); err != nil {
		return nil, err
	}
	created := make(map[string]time.Time, len(names))
	for i, n := range names {
		created[n] = createdAt[i]
	}
	ready := <-readyDone
	allReady, err := ready.at, ready.err
	if err != nil {
		return nil, fmt.Errorf("%w\noperator log:\n%s", err, op.Logs())
	}
	res := &results{Clusters: o.clusters, AllReadySeconds: allReady.Sub(start).Seconds(), Floor: fl}
	fmt.Fprintf(os.Stderr, "all %d Ready in %.1fs (%.1f× the floor)\n", o.clusters, res.AllReadySeconds, res.AllReadySeconds/fl.AllIPsSeconds)
	// Every cluster Ready says both servers answer it: the followers end within a round.
	time.AfterFunc(followGrace, stopFollowing)
	fol.wait()

	statusIPs, err := readyIPs(ctx, e)
	if err != nil {
		return nil, err
	}
	var toIP, toCM, toDNS, toProxy, toReady, servedToReady []time.Duration
	for _, n := range names {
		// The IP the operator published (status), and when the hosted Service was first seen with it.
		ip := statusIPs[n]
		_, at := ipSeen.get(n + "-apps/" + ip)
		if at.IsZero() {
			res.Missed = append(res.Missed, n+": "+ip+" never seen on the hosted Service")
			continue
		}
		toIP = append(toIP, at.Sub(created[n]))
		for _, end := range []struct {
			what string
			seen *stamps
			key  string
			into *[]time.Duration
		}{{"ConfigMap", cmSeen, ip, &toCM}, {"DNS answer", fol.dns, n, &toDNS}, {"proxy route", fol.proxy, n, &toProxy}, {"Ready", readySeen, n, &toReady}} {
			if v, t := end.seen.get(end.key); t.IsZero() || (end.seen != cmSeen && end.seen != readySeen && v != ip) {
				res.Missed = append(res.Missed, fmt.Sprintf("%s: %s for %s never seen (%q)", n, end.what, ip, v))
			} else {
				*end.into = append(*end.into, t.Sub(at))
			}
		}
		_, dnsAt := fol.dns.get(n)
		_, proxyAt := fol.proxy.get(n)
		_, readyAt := readySeen.get(n)
		if !dnsAt.IsZero() && !proxyAt.IsZero() && !readyAt.IsZero() {
			servedToReady = append(servedToReady, readyAt.Sub(later(dnsAt, proxyAt)))
		}
	}
	res.Create = phase{IPToConfigMap: bench.Summarise(toCM), IPToDNS: bench.Summarise(toDNS), IPToProxy: bench.Summarise(toProxy)}
	res.CreateToIP, res.CreateIPToReady = bench.Summarise(toIP), bench.Summarise(toReady)
	res.CreateServedToReady = bench.Summarise(servedToReady)
	if res.Change, err = measureChanges(ctx, e, s, names, o.changes, ipSeen, cmSeen); err != nil {
		// The burst's figures stand; the run still fails.
		return res, fmt.Errorf("IP change: %w", err)
	}

	res.OperatorPeakRSSMiB = bench.PeakRSSMiB(op.PID())
	// The generation CoreDNS runs at the end carries the last reload request the operator wrote.
	generation, err := localenv.LookupTXT(s.DNSAddr, dns.GenerationName)
	if err != nil {
		return nil, fmt.Errorf("asking CoreDNS for its configuration generation: %w", err)
	}
	if res.DNSReloadRequests, err = dns.ReloadRequestOf(generation); err != nil {
		return nil, err
	}
	res.RenderSeconds, res.DNSBytes, res.HAProxyBytes, err = renderTime(ctx, e, s.DNSOpts, s.ProxyOpts)
	return res, err
}

// stamps records when a key was first seen, with a value.
type stamps struct {
	mu  sync.Mutex
	at  map[string]time.Time
	val map[string]string
}

func newStamps() *stamps {
	return &stamps{at: map[string]time.Time{}, val: map[string]string{}}
}

// set records the first time key was seen.
func (s *stamps) set(key, val string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.at[key]; !ok {
		s.at[key], s.val[key] = at, val
	}
}

func (s *stamps) get(key string) (string, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.val[key], s.at[key]
}

// wait returns when key was first seen, waiting up to timeout for it.
func (s *stamps) wait(key string, timeout time.Duration) (time.Time, error) {
	var at time.Time
	// Every 20 ms, as the benchmark's other pollers: the time returned is the watch's, this only ends the wait.
	err := poll.WaitEvery(context.Background(), timeout, 20*time.Millisecond, key+" seen", func() (bool, string, error) {
		_, at = s.get(key)
		return !at.IsZero(), "not seen", nil
	})
	return at, err
}

func watchIPs(ctx context.Context, e *localenv.Env, seen *stamps) error {
	w, err := e.HostedKube.CoreV1().Services(localenv.RouterNS).Watch(ctx, metav1.ListOptions{})
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
			for _, ing := range svc.Status.LoadBalancer.Ingress {
				if ing.IP != "" {
					seen.set(svc.Name+"/"+ing.IP, ing.IP, time.Now())
				}
			}
		}
	}()
	return nil
}

// waitAllReady waits for n AppsIngresses Ready, recording in seen when each was first seen Ready. It watches them, as
// the floor watches its Services: a list every few hundred milliseconds would load the API server the operator
// writes to with thousands of objects a second.
func waitAllReady(ctx context.Context, e *localenv.Env, n int, seen *stamps) (time.Time, error) {
	ais := e.MgmtDyn.Resource(localenv.AppsIngressGVR).Namespace(localenv.ClustersNS)
	lw := &cache.ListWatch{
		ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ais.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return ais.Watch(ctx, o) },
	}
	ready, count := map[string]bool{}, 0
	// Bounded by the bench's --timeout: a fleet of thousands takes minutes on a small machine.
	_, err := watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{}, nil, func(ev watch.Event) (bool, error) {
		it, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || ev.Type == watch.Deleted {
			return false, nil
		}
		// All Ready at once, as a list would see them: one that turned Ready and then left it counts again only
		// when it is back.
		phase, _, _ := unstructured.NestedString(it.Object, "status", "phase")
		was, now := ready[it.GetName()], phase == "Ready"
		ready[it.GetName()] = now
		switch {
		case now && !was:
			seen.set(it.GetName(), "", time.Now())
			count++
		case was && !now:
			count--
		}
		return count == n, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("%d of %d AppsIngresses Ready: %w", count, n, err)
	}
	return time.Now(), nil
}

func waitDNS(ctx context.Context, server, name, ip string) (time.Time, error) {
	var at time.Time
	var last string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		got, err := localenv.LookupA(server, localenv.VLANClient, name)
		if err == nil && got == ip {
			at = time.Now()
			return true, nil
		}
		last = fmt.Sprintf("answer %q, error %v", got, err)
		return false, nil
	})
	if err != nil {
		return at, fmt.Errorf("DNS A %s from the VLAN view: want %s, last %s: %w", name, ip, last, err)
	}
	return at, nil
}

func waitProxy(ctx context.Context, port int, sni, ip string) (time.Time, error) {
	var at time.Time
	var last string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		_, body, err := localenv.GetViaProxy(port, sni)
		if err == nil && strings.Contains(body, "router "+ip+":") {
			at = time.Now()
			return true, nil
		}
		last = fmt.Sprintf("body %q, error %v", body, err)
		return false, nil
	})
	if err != nil {
		return at, fmt.Errorf("TLS with SNI %s through HAProxy: want router %s, last %s: %w", sni, ip, last, err)
	}
	return at, nil
}

// measureChanges moves n clusters, one at a time, to the second pool while all the others stay Ready: MetalLB gives
// each a new IP, and the time from that IP appearing on the hosted Service to the ConfigMap, the DNS answer and the
// proxy route is the steady-state latency the target is about.
func measureChanges(ctx context.Context, e *localenv.Env, s *localenv.Serving, names []string, n int, ipSeen, cmSeen *stamps) (phase, error) {
	var toCM, toDNS, toProxy []time.Duration
	for i := 0; i < n && i < len(names); i++ {
		name := names[i*len(names)/n]
		patch := []byte(`{"spec":{"metallb":{"addressPoolName":"` + localenv.PoolB + `"}}}`)
		if _, err := e.MgmtDyn.Resource(localenv.AppsIngressGVR).Namespace(localenv.ClustersNS).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return phase{}, err
		}
		var ip string
		var at time.Time
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			ip, at = ipSeen.latestIn(name+"-apps/", changePoolPrefix)
			return !at.IsZero(), nil
		}); err != nil {
			return phase{}, fmt.Errorf("%s: no IP from %s: %w", name, localenv.PoolB, err)
		}
		host := "x.apps." + name + "." + localenv.BaseDomain
		cmAt, err := cmSeen.wait(ip, time.Minute)
		if err != nil {
			return phase{}, fmt.Errorf("%s: %w", name, err)
		}
		dnsAt, err := waitDNS(ctx, s.DNSAddr, host, ip)
		if err != nil {
			return phase{}, fmt.Errorf("%s: DNS: %w", name, err)
		}
		proxyAt, err := waitProxy(ctx, s.Ports.HTTPS, host, ip)
		if err != nil {
			return phase{}, fmt.Errorf("%s: proxy: %w", name, err)
		}
		toCM, toDNS, toProxy = append(toCM, cmAt.Sub(at)), append(toDNS, dnsAt.Sub(at)), append(toProxy, proxyAt.Sub(at))
	}
	return phase{IPToConfigMap: bench.Summarise(toCM), IPToDNS: bench.Summarise(toDNS), IPToProxy: bench.Summarise(toProxy)}, nil
}

// latestIn is a value and time of a key starting with prefix whose value starts with valuePrefix.
func (s *stamps) latestIn(prefix, valuePrefix string) (string, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, at := range s.at {
		if strings.HasPrefix(k, prefix) && strings.HasPrefix(s.val[k], valuePrefix) {
			return s.val[k], at
		}
	}
	return "", time.Time{}
}

// readyIPs is each AppsIngress's first status.externalIPs entry: the address the operator published.
func readyIPs(ctx context.Context, e *localenv.Env) (map[string]string, error) {
	list, err := e.MgmtDyn.Resource(localenv.AppsIngressGVR).Namespace(localenv.ClustersNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, it := range list.Items {
		if ips, _, _ := unstructured.NestedStringSlice(it.Object, "status", "externalIPs"); len(ips) > 0 {
			out[it.GetName()] = ips[0]
		}
	}
	return out, nil
}

// renderTime renders every cluster's entries the way the operator does, 20 times, and returns the mean.
func renderTime(ctx context.Context, e *localenv.Env, dnsOpts dns.Options, proxyOpts proxy.Options) (float64, int, int, error) {
	list, err := e.MgmtDyn.Resource(localenv.AppsIngressGVR).Namespace(localenv.ClustersNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, 0, err
	}
	var clusters []routes.Cluster
	for _, it := range list.Items {
		ips, _, _ := unstructured.NestedStringSlice(it.Object, "status", "externalIPs")
		api, _, _ := unstructured.NestedString(it.Object, "status", "apiEndpoint")
		c := routes.Cluster{Key: it.GetNamespace() + "/" + it.GetName(), Name: it.GetName(), BaseDomain: localenv.BaseDomain,
			HTTPPort: 80, HTTPSPort: 443, VLANCIDRs: []netip.Prefix{netip.MustParsePrefix(localenv.VLANCIDR)}, APIEndpoint: api}
		for _, s := range ips {
			c.ExternalIPs = append(c.ExternalIPs, netip.MustParseAddr(s))
		}
		clusters = append(clusters, c)
	}
	const rounds = 20
	var dnsFiles, proxyFiles routes.Files
	start := time.Now()
	for range rounds {
		dnsFiles, proxyFiles = dns.Render(dnsOpts, clusters), proxy.Render(proxyOpts, clusters)
	}
	return time.Since(start).Seconds() / rounds, largest(dnsFiles), largest(proxyFiles), nil
}

// largest is the size of the largest ConfigMap files makes (the main one or a shard): what bounds the fleet.
func largest(files routes.Files) int {
	n := 0
	for _, set := range append([]map[string]string{files.Main}, files.Shards...) {
		n = max(n, routes.Size(set))
	}
	return n
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
