package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
)

// phase is the latencies of one measurement.
type phase struct {
	// IPToConfigMap: external IP assigned → the operator's ConfigMaps hold it (the operator's own latency).
	IPToConfigMap bench.Latency `json:"ipToConfigMap"`
	// IPToDNS: external IP assigned → CoreDNS answers it to a VLAN client (adds the file sync and CoreDNS's reload).
	IPToDNS bench.Latency `json:"ipToDNS"`
	// IPToProxy: external IP assigned → a TLS connection through HAProxy with the cluster's SNI reaches that IP.
	IPToProxy bench.Latency `json:"ipToProxy"`
}

type results struct {
	Clusters int `json:"clusters"`
	// Create: every AppsIngress created at once, each IP assigned in the burst.
	Create phase `json:"create"`
	// Change: with every cluster Ready, one cluster at a time gets a new IP (steady state).
	Change phase `json:"ipChange"`
	// CreateToIP: in the burst, AppsIngress created → its hosted Service's external IP (the operator's Service
	// creation, then MetalLB; compare the floor's create → IP).
	CreateToIP bench.Latency `json:"createToIP"`
	// CreateIPToReady: in the burst, external IP assigned → the AppsIngress's status Ready (the operator has seen both
	// servers answer; seen on a watch).
	CreateIPToReady bench.Latency `json:"createIPToReady"`
	// CreateServedToReady: in the burst, both servers serve the cluster (the later of its DNS answer and its proxy
	// route) → status Ready: how long the operator takes to notice and report what already works.
	CreateServedToReady bench.Latency `json:"createServedToReady"`
	// Missed lists clusters left out of a latency because one of its ends was not observed (should be empty).
	Missed []string `json:"missed,omitempty"`
	// AllReadySeconds: from creating the first AppsIngress until all are Ready.
	AllReadySeconds float64 `json:"allReadySeconds"`
	// Floor: as many LoadBalancer Services made straight in the hosted cluster, in the same run, until all have IPs.
	Floor floor `json:"floor"`
	// RenderSeconds: one full render of the DNS files (Corefile and zone files) and haproxy.cfg for every cluster (in
	// process); DNSBytes is the size of all DNS files together.
	RenderSeconds float64 `json:"renderSeconds"`
	DNSBytes      int     `json:"dnsBytes"`
	HAProxyBytes  int     `json:"haproxyCfgBytes"`
	// DNSReloadRequests is how many reloads the operator asked of CoreDNS during the run (its repair of a replica
	// stuck on one configuration; a fleet being created should need none).
	DNSReloadRequests uint64 `json:"dnsReloadRequests"`
	// OperatorPeakRSSMiB is the operator process's VmHWM at the end.
	OperatorPeakRSSMiB float64 `json:"operatorPeakRSSMiB"`
}

// Print is the results as a table.
func (r *results) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "clusters\t%d\n", r.Clusters)
	for _, l := range []struct {
		name string
		l    bench.Latency
	}{
		{"create burst: AppsIngress created → IP", r.CreateToIP},
		{"create burst: IP → ConfigMap", r.Create.IPToConfigMap}, {"create burst: IP → DNS answer", r.Create.IPToDNS}, {"create burst: IP → proxy route", r.Create.IPToProxy},
		{"create burst: IP → Ready", r.CreateIPToReady},
		{"create burst: served → Ready", r.CreateServedToReady},
		{"IP change: IP → ConfigMap", r.Change.IPToConfigMap}, {"IP change: IP → DNS answer", r.Change.IPToDNS}, {"IP change: IP → proxy route", r.Change.IPToProxy},
	} {
		fmt.Fprintf(tw, "%s\tp50 %.3fs\tp95 %.3fs\tmax %.3fs\t(%d)\n", l.name, l.l.P50Seconds, l.l.P95Seconds, l.l.MaxSeconds, l.l.Samples)
	}
	fmt.Fprintf(tw, "floor: %d LoadBalancer Services alone, create → IP\tp50 %.3fs\tp95 %.3fs\tmax %.3fs\n", r.Floor.Services,
		r.Floor.CreateToIP.P50Seconds, r.Floor.CreateToIP.P95Seconds, r.Floor.CreateToIP.MaxSeconds)
	fmt.Fprintf(tw, "floor: all IPs\t%.1fs\n", r.Floor.AllIPsSeconds)
	fmt.Fprintf(tw, "all Ready\t%.1fs\t(%.1f× the floor)\n", r.AllReadySeconds, r.AllReadySeconds/r.Floor.AllIPsSeconds)
	fmt.Fprintf(tw, "full render\t%.2fms\t(DNS files %d B, haproxy.cfg %d B)\n", r.RenderSeconds*1000, r.DNSBytes, r.HAProxyBytes)
	fmt.Fprintf(tw, "CoreDNS reloads requested by the operator\t%d\n", r.DNSReloadRequests)
	fmt.Fprintf(tw, "operator peak RSS\t%.1f MiB\n", r.OperatorPeakRSSMiB)
	for _, m := range r.Missed {
		fmt.Fprintf(tw, "missed\t%s\n", m)
	}
	_ = tw.Flush()
}
