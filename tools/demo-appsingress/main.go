// Command demo-appsingress shows the apps-ingress-operator's main job on two local control planes
// (tests/appsingress/localenv): it creates an AppsIngress for a hosted cluster, waits for MetalLB's controller to
// assign the external IP and the AppsIngress to become Ready, then asks the real CoreDNS for the same name from the
// VLAN and from the pod network, and sends a TLS request with that name through the real HAProxy, printing the
// certificate of the server that answered (the stand-in router's: TLS was passed through). Everything stops at the
// end. `make demo-appsingress`.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

const cluster = "demo"

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "demo-appsingress:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "appsingress-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	step("starting a management and a hosted cluster, MetalLB's controller, CoreDNS and HAProxy")
	e, err := localenv.Start(ctx, dir)
	defer e.Stop()
	if err != nil {
		return err
	}
	s, err := e.StartServing(ctx)
	if err != nil {
		return err
	}
	if _, err := e.StartOperator(ctx, s); err != nil {
		return err
	}
	syncCtx, stopSync := context.WithCancel(ctx)
	defer stopSync()
	go e.SyncConfig(syncCtx, s, nil)

	step("kubectl apply: AppsIngress clusters/%s (baseDomain %s, pool %s, vlanCIDRs [%s])", cluster, localenv.BaseDomain, localenv.PoolName, localenv.VLANCIDR)
	if err := e.CreateAppsIngress(ctx, cluster, s.Ports); err != nil {
		return err
	}
	var ip, last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ai, err := e.MgmtDyn.Resource(localenv.AppsIngressGVR).Namespace(localenv.ClustersNS).Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		phase, _, _ := unstructured.NestedString(ai.Object, "status", "phase")
		reason, _, _ := unstructured.NestedString(ai.Object, "status", "reason")
		ips, _, _ := unstructured.NestedStringSlice(ai.Object, "status", "externalIPs")
		if line := fmt.Sprintf("  phase %-8s reason %-18s externalIPs %v", phase, reason, ips); line != last && phase != "" {
			fmt.Println(line)
			last = line
		}
		if phase == "Ready" && len(ips) > 0 {
			ip = ips[0]
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return err
	}

	name := "console-openshift-console.apps." + cluster + "." + localenv.BaseDomain
	step("dig %s, from the VLAN (source %s) and from the pod network (source %s)", name, localenv.VLANClient, localenv.ProxyIP)
	for _, c := range []struct{ view, src, want string }{{"VLAN", localenv.VLANClient, ip}, {"pod network", localenv.ProxyIP, localenv.ProxyIP}} {
		var got string
		_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			got, _ = localenv.LookupA(s.DNSAddr, c.src, name)
			return got == c.want, nil
		})
		fmt.Printf("  %-12s %s. IN A %s   (want %s: the %s)\n", c.view+":", name, got, c.want, map[bool]string{true: "MetalLB external IP", false: "proxy's address"}[c.view == "VLAN"])
	}

	step("TLS with SNI %s through HAProxy (%s:%d)", name, localenv.ProxyIP, s.Ports.HTTPS)
	var body, cn string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		cert, b, err := localenv.GetViaProxy(s.Ports.HTTPS, name)
		if err != nil {
			return false, nil
		}
		body, cn = b, cert.Subject.CommonName
		return true, nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("  certificate: CN=%q (the router's own: HAProxy did not terminate TLS)\n  response:    %s\n", cn, body)
	step("done; stopping everything")
	return nil
}

func step(format string, args ...any) {
	fmt.Printf("\n== "+format+"\n", args...)
}
