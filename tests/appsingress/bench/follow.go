package main

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

// follower records, per cluster, when CoreDNS's VLAN view and, separately, HAProxy first serve the address MetalLB gave the
// cluster's hosted Service. It asks while the burst runs, so that each figure is that cluster's own latency rather
// than the time until the whole fleet was Ready.
//
// Each server is asked by a fixed set of scanners going round the clusters still waiting, not by a poller per
// cluster, and a cluster only once the ConfigMaps hold its address (neither server can serve it before): questions
// asked earlier would load CoreDNS, HAProxy and this machine's two cores, which the floor they are compared with does
// not share, and change no figure. The proxy's TLS handshakes are spread over proxyScanners.
type follower struct {
	names    []string
	ipPrefix string
	ipSeen   *stamps
	// cmSeen is when the ConfigMaps first held each address.
	cmSeen    *stamps
	dnsAddr   string
	httpsPort int
	// dns and proxy are when each cluster's address was first served, keyed by its name.
	dns, proxy *stamps
	wg         sync.WaitGroup
}

const (
	proxyScanners = 4
	followPause   = 20 * time.Millisecond
)

// follow starts following names' first address in ipPrefix (the pool they are created in) until ctx ends or every
// one is served.
func follow(ctx context.Context, names []string, ipPrefix string, ipSeen, cmSeen *stamps, s *localenv.Serving) *follower {
	f := &follower{names: names, ipPrefix: ipPrefix, ipSeen: ipSeen, cmSeen: cmSeen, dnsAddr: s.DNSAddr, httpsPort: s.Ports.HTTPS,
		dns: newStamps(), proxy: newStamps()}
	f.scan(ctx, names, f.dns, func(name, ip string) bool {
		got, err := localenv.LookupA(f.dnsAddr, localenv.VLANClient, "x.apps."+name+"."+localenv.BaseDomain)
		return err == nil && got == ip
	})
	for i := range proxyScanners {
		var mine []string
		for j := i; j < len(names); j += proxyScanners {
			mine = append(mine, names[j])
		}
		f.scan(ctx, mine, f.proxy, func(name, ip string) bool {
			_, body, err := localenv.GetViaProxy(f.httpsPort, "x.apps."+name+"."+localenv.BaseDomain)
			return err == nil && strings.Contains(body, "router "+ip+":")
		})
	}
	return f
}

// scan goes round names until each is done: a name is asked once its address is seen and written, and is done when
// served says that address is served.
func (f *follower) scan(ctx context.Context, names []string, done *stamps, served func(name, ip string) bool) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		left := len(names)
		for left > 0 && ctx.Err() == nil {
			left = 0
			for _, n := range names {
				if _, at := done.get(n); !at.IsZero() {
					continue
				}
				left++
				ip, at := f.ipSeen.latestIn(n+"-apps/", f.ipPrefix)
				if at.IsZero() {
					continue
				}
				if _, written := f.cmSeen.get(ip); written.IsZero() {
					continue
				}
				if served(n, ip) {
					done.set(n, ip, time.Now())
					left--
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(followPause):
			}
		}
	}()
}

// wait waits for every scanner to finish (every name served, or ctx ended).
func (f *follower) wait() { f.wg.Wait() }
