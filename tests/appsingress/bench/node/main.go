// Command node measures the apps-ingress-operator chart as users run it: installed with `helm install --wait` on a
// management cluster with a real node (CoreDNS and HAProxy as Pods, attached to a VLAN of this machine's own through
// a NodePort DNS Service with externalTrafficPolicy Local), one hosted cluster whose MetalLB address moves between
// two VLAN addresses. For each move it reports the time until a VLAN client's dig answers the new address, until a
// TLS connection through the proxy Service reaches the router there, and until the AppsIngress says Ready with it,
// and counts the moves where Ready came before both were served (the status must never claim early).
//
//	go run ./tests/appsingress/bench/node --out _output/bench/appsingress-node.json   (as root)
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

const (
	chart   = "apps-ingress-operator"
	cluster = "bench"
)

type results struct {
	Changes int `json:"changes"`
	// VLANAnswers: pool changed → a VLAN client's dig answers the new address.
	VLANAnswers bench.Latency `json:"vlanAnswers"`
	// ProxyRoutes: pool changed → TLS through the proxy Service with the cluster's SNI reaches the new router.
	ProxyRoutes bench.Latency `json:"proxyRoutes"`
	// BothServed: the later of the two.
	BothServed bench.Latency `json:"bothServed"`
	// Ready: pool changed → the AppsIngress Ready with the new address.
	Ready bench.Latency `json:"ready"`
	// ReadyEarly counts changes whose Ready was seen before both were served.
	ReadyEarly int `json:"readyEarly"`
}

func main() {
	changes := flag.Int("changes", 50, "MetalLB address changes measured")
	out := flag.String("out", "_output/bench/appsingress-node.json", "results file (JSON)")
	timeout := flag.Duration("timeout", 20*time.Minute, "give up after this long")
	flag.Parse()
	bench.Main("bench appsingress node", *out, *timeout, func(ctx context.Context) (*results, error) { return run(ctx, *changes) })
}

func run(ctx context.Context, changes int) (*results, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	env, err := localenv.StartWith(ctx, filepath.Join(root, ".devcluster", "bench-appsingress-node"), localenv.Options{Node: true})
	if env != nil {
		defer env.Stop()
	}
	if err != nil {
		return nil, err
	}
	imageValues, err := env.Mgmt.BuildChartImage(ctx, root, chart, "image", "./cmd/apps-ingress-operator")
	if err != nil {
		return nil, err
	}
	if err := localenv.ImportUpstreamImages(ctx, env.Mgmt); err != nil {
		return nil, err
	}
	undo, err := localenv.SetUpVLAN(env.Mgmt)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := undo(); err != nil {
			fmt.Fprintln(os.Stderr, "bench appsingress node: removing the VLAN:", err)
		}
	}()
	apps := "apps." + cluster + "." + localenv.BaseDomain
	for ip, cn := range map[string]string{localenv.RouterA: "router-a", localenv.RouterB: "router-b"} {
		stopRouter, err := localenv.StartVLANRouter(ip, cn, apps)
		if err != nil {
			return nil, err
		}
		defer stopRouter()
	}
	release, err := helmrelease.ForRepoChart(env.Mgmt.Kubeconfig(), root, chart)
	if err != nil {
		return nil, err
	}
	values := nodetier.Merge(imageValues, map[string]any{"dns": map[string]any{
		"service": map[string]any{"type": "NodePort", "externalTrafficPolicy": "Local"},
	}})
	if err := release.InstallWait(ctx, values, nodetier.InstallTimeout); err != nil {
		return nil, fmt.Errorf("helm install --wait: %w", err)
	}
	if err := env.CreateVLANPools(ctx); err != nil {
		return nil, err
	}
	if err := env.CreateVLANAppsIngress(ctx, cluster, localenv.VLANPoolA, localenv.NodeVLANCIDR); err != nil {
		return nil, err
	}
	if _, err := waitReady(ctx, env, localenv.RouterA); err != nil {
		return nil, err
	}
	dnsPort, proxyIP, err := endpoints(ctx, env)
	if err != nil {
		return nil, err
	}
	name := "console-openshift-console." + apps
	var vlan, proxy, both, ready []time.Duration
	early := 0
	for i := range changes {
		pool, ip, cn := localenv.VLANPoolB, localenv.RouterB, "router-b"
		if i%2 == 1 {
			pool, ip, cn = localenv.VLANPoolA, localenv.RouterA, "router-a"
		}
		start := time.Now()
		if err := env.SetPool(ctx, cluster, pool); err != nil {
			return nil, err
		}
		readyC := make(chan time.Time, 1)
		go func() {
			at, err := waitReady(ctx, env, ip)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench appsingress node:", err)
			}
			readyC <- at
		}()
		vlanAt, err := seen(ctx, "the VLAN view answering "+ip, func() bool {
			// The DNS Service's node port on the node's address in the VLAN, as a VLAN client asks it.
			out, err := localenv.InVLAN(ctx, localenv.DigArgs(localenv.VLANNodeIP, dnsPort, name)...)
			return err == nil && out == ip
		})
		if err != nil {
			return nil, fmt.Errorf("change %d: %w", i, err)
		}
		proxyAt, err := seen(ctx, "the proxy routing to "+cn+" ("+ip+")", func() bool {
			return routerBehind(net.JoinHostPort(proxyIP, "443"), name) == cn
		})
		if err != nil {
			return nil, fmt.Errorf("change %d: %w", i, err)
		}
		readyAt := <-readyC
		if readyAt.IsZero() {
			return nil, fmt.Errorf("change %d: never Ready with %s", i, ip)
		}
		servedAt := vlanAt
		if proxyAt.After(servedAt) {
			servedAt = proxyAt
		}
		// The pollers see a change up to one poll late: Ready before that slack is Ready before served.
		if readyAt.Before(servedAt.Add(-pollEvery)) {
			early++
		}
		vlan, proxy = append(vlan, vlanAt.Sub(start)), append(proxy, proxyAt.Sub(start))
		both, ready = append(both, servedAt.Sub(start)), append(ready, readyAt.Sub(start))
		fmt.Fprintf(os.Stderr, "change %d → %s: VLAN %s, proxy %s, Ready %s\n", i+1, ip,
			vlanAt.Sub(start).Round(time.Millisecond), proxyAt.Sub(start).Round(time.Millisecond), readyAt.Sub(start).Round(time.Millisecond))
	}
	return &results{
		Changes: changes, VLANAnswers: bench.Summarise(vlan), ProxyRoutes: bench.Summarise(proxy),
		BothServed: bench.Summarise(both), Ready: bench.Summarise(ready), ReadyEarly: early,
	}, nil
}

const pollEvery = 20 * time.Millisecond

// seen calls ok every pollEvery until it holds, for 3 minutes at most, and returns when it first did.
func seen(ctx context.Context, what string, ok func() bool) (time.Time, error) {
	var at time.Time
	err := poll.WaitEvery(ctx, 3*time.Minute, pollEvery, what, func() (bool, string, error) {
		if !ok() {
			return false, "", nil
		}
		at = time.Now()
		return true, "", nil
	})
	return at, err
}

func waitReady(ctx context.Context, env *localenv.Env, ip string) (time.Time, error) {
	return seen(ctx, "AppsIngress "+cluster+" Ready with "+ip, func() bool {
		ai, err := env.MgmtDyn.Resource(localenv.AppsIngressGVR).Namespace(localenv.ClustersNS).Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return false
		}
		phase, _, _ := unstructured.NestedString(ai.Object, "status", "phase")
		ips, _, _ := unstructured.NestedStringSlice(ai.Object, "status", "externalIPs")
		return phase == "Ready" && strings.Join(ips, ",") == ip
	})
}

// endpoints are the DNS Service's node port (for the VLAN client) and the proxy Service's cluster IP.
func endpoints(ctx context.Context, env *localenv.Env) (string, string, error) {
	dns, err := env.MgmtKube.CoreV1().Services(chart).Get(ctx, chart+"-dns", metav1.GetOptions{})
	if err != nil {
		return "", "", err
	}
	proxy, err := env.MgmtKube.CoreV1().Services(chart).Get(ctx, chart+"-proxy", metav1.GetOptions{})
	if err != nil {
		return "", "", err
	}
	for _, p := range dns.Spec.Ports {
		if p.Name == "dns" {
			return strconv.Itoa(int(p.NodePort)), proxy.Spec.ClusterIP, nil
		}
	}
	return "", "", fmt.Errorf("the DNS Service has no port named dns")
}

// routerBehind is the common name of the certificate a TLS connection to addr with SNI name gets ("" on failure).
func routerBehind(addr, name string) string {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{ServerName: name, InsecureSkipVerify: true}) //nolint:gosec // which certificate answers is what is measured
	if err != nil {
		return ""
	}
	defer func() { _ = conn.Close() }()
	if certs := conn.ConnectionState().PeerCertificates; len(certs) > 0 {
		return certs[0].Subject.CommonName
	}
	return ""
}

// Print is the results as a table.
func (r *results) Print(out io.Writer) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "apps-ingress on a node: %d MetalLB address changes\tp50\tp95\tmax\n", r.Changes)
	for _, row := range []struct {
		what string
		l    bench.Latency
	}{
		{"VLAN client's dig answers the new address", r.VLANAnswers},
		{"TLS through the proxy reaches the new router", r.ProxyRoutes},
		{"both served", r.BothServed},
		{"AppsIngress Ready with the new address", r.Ready},
	} {
		fmt.Fprintf(w, "%s\t%.2f s\t%.2f s\t%.2f s\n", row.what, row.l.P50Seconds, row.l.P95Seconds, row.l.MaxSeconds)
	}
	fmt.Fprintf(w, "Ready before both were served\t%d of %d\t\t\n", r.ReadyEarly, r.Changes)
	_ = w.Flush()
}
