//go:build e2e

package e2e_test

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/dns"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/coredns"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

// CoreDNS's log lines around a Corefile reload: the restart starts (it then parses the Corefile and its imports and
// sets every server block up), and the reload plugin, once the new instance runs, hashes the Corefile again, with its
// imports as they are at that moment, as the baseline of its next check.
const (
	reloadStarted = "[INFO] Reloading\n"
	reloadHashed  = "Running configuration SHA512"
)

// TestCoreDNSReloadRaceConverges writes a second change of the imported files while CoreDNS is restarting for a first
// one, as the sidecar does when renders follow each other in a fleet being created. The restart has read the first
// change; the reload plugin's baseline, taken after it, includes the second. With a Corefile that never changes (only
// its imports do), the files on disk then hash equal to the baseline and CoreDNS serves the first change for ever. The
// rendered Corefile carries a digest of the imports, so the running instance's Corefile differs from the one on disk,
// and the next check reloads.
func TestCoreDNSReloadRaceConverges(t *testing.T) {
	port, err := localproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "coredns")
	opts := dns.Options{Port: port, ProxyIPs: []netip.Addr{netip.MustParseAddr(proxyIP)}, ZoneDir: dir, Shards: 4}
	// Enough clusters that a restart takes a while (parsing and setting up a server block and a zone per cluster):
	// the window the second write has to land in.
	var fleet []routes.Cluster
	for i := range 600 {
		fleet = append(fleet, raceCluster(fmt.Sprintf("c%03d", i)))
	}
	addr := net.JoinHostPort(proxyIP, strconv.Itoa(port))
	server, err := coredns.Start(t.Context(), dir, dns.Render(opts, fleet).All(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Stop() })
	serves := func(c routes.Cluster) bool {
		_, got := lookupAt(t, server, addr, podClient, dns.DefaultProbeName(c), dnsmessage.TypeA)
		return slices.Equal(got, opts.ProxyIPs)
	}
	waitLog(t, server, reloadHashed, 1, 30*time.Second)

	// The second write lands a while after the restart started: after its parse, before the plugin's baseline. Each
	// attempt waits twice as long, until the restart is seen to have read the first change only (on this machine a
	// restart of this fleet takes 250-500 ms, its parse about 20 ms). Both writes are staged before: writing 1,800
	// files takes longer than the restart, while the swap that makes them visible is one rename.
	for attempt, delay := 1, 5*time.Millisecond; ; attempt, delay = attempt+1, delay*2 {
		first, second := raceCluster(fmt.Sprintf("first-%d", attempt)), raceCluster(fmt.Sprintf("second-%d", attempt))
		started := strings.Count(readLog(t, server), reloadStarted)
		fleet = append(fleet, first)
		withFirst := dns.Render(opts, fleet).All()
		fleet = append(fleet, second)
		secondFiles := dns.Render(opts, fleet)
		withSecond := secondFiles.All()
		if err := server.Update(withFirst); err != nil {
			t.Fatal(err)
		}
		staged, err := server.Stage(withSecond)
		if err != nil {
			t.Fatal(err)
		}
		waitLog(t, server, reloadStarted, started+1, 30*time.Second)
		time.Sleep(delay)
		hashed := strings.Count(readLog(t, server), reloadHashed)
		if err := staged.Commit(); err != nil {
			t.Fatal(err)
		}
		if strings.Count(readLog(t, server), reloadHashed) > hashed {
			t.Fatalf("attempt %d: the restart ended before the second write (%s after it started): the window is too short on this machine", attempt, delay)
		}
		waitLog(t, server, reloadHashed, hashed+1, 30*time.Second)
		if !serves(first) {
			t.Fatalf("attempt %d: the restart does not serve the first change\n%s", attempt, server.Logs())
		}
		if serves(second) {
			// The restart read the second write too (it landed before the parse): no race; try later in the window.
			if attempt == 7 {
				t.Fatalf("after %d attempts the second write never landed inside a restart", attempt)
			}
			continue
		}
		// The race happened: the restart serves the first change only, and its baseline has the second.
		raced := time.Now()
		if err := poll.Wait(t.Context(), 10*time.Second, "CoreDNS serving the second change after its restart", func() (bool, string, error) {
			return serves(second), "the first change only", nil
		}); err != nil {
			t.Fatalf("attempt %d (second write %s into the restart): %v; the reload is stuck\n%s", attempt, delay, err, server.Logs())
		}
		t.Logf("attempt %d: the second write landed %s into a restart; served %s after the restart ended",
			attempt, delay, time.Since(raced).Round(time.Millisecond))
		// What an operator asks a replica to learn which configuration it runs.
		if got, err := localenv.LookupTXT(addr, dns.GenerationName); err != nil || got != dns.Generation(secondFiles.Shards, 0) {
			t.Fatalf("CoreDNS serves generation %q (%v), want %q (the Corefile's)", got, err, dns.Generation(secondFiles.Shards, 0))
		}
		return
	}
}

func raceCluster(name string) routes.Cluster {
	return routes.Cluster{
		Key: "clusters/" + name, Name: name, BaseDomain: "example.com", HTTPPort: 80, HTTPSPort: 443,
		ExternalIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")},
		VLANCIDRs:   []netip.Prefix{netip.MustParsePrefix("127.0.1.0/24")},
	}
}

func readLog(t *testing.T, server *coredns.Server) string {
	t.Helper()
	data, err := os.ReadFile(server.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// waitLog waits until server's log holds line n times.
func waitLog(t *testing.T, server *coredns.Server, line string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for strings.Count(readLog(t, server), line) < n {
		if time.Now().After(deadline) || server.Exited() {
			t.Fatalf("CoreDNS did not log %q %d times within %s\n%s", strings.TrimSpace(line), n, timeout, server.Logs())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStuckCoreDNSIsAskedToReload: a CoreDNS whose restart failed keeps its previous configuration and, its reload
// check having taken the new files as its baseline, never tries them again. The operator sees the replica run one
// generation without serving the entry, says so in the status, and writes the Corefile again with a reload request,
// which the sidecar delivers and CoreDNS loads.
func TestStuckCoreDNSIsAskedToReload(t *testing.T) {
	noSyncErrors(t)
	if err := startMetalLB(t.Context()); err != nil {
		t.Fatal(err)
	}
	const name = "stuck"
	key := types.NamespacedName{Namespace: clustersNS, Name: name}
	c := mgmtClient(t)
	// The files are held until the entry is written, then delivered once with a server block bound to an address this
	// host does not have: the restart fails on it. The operator writes nothing more for this entry.
	configSync.hold.Store(true)
	defer configSync.hold.Store(false)
	createAppsIngress(t, name, poolA, nil)
	t.Cleanup(func() { deleteAndWait(t, key) })
	waitFor(t, c, key, "written, waiting for the servers", time.Minute, func(ai *v1alpha1.AppsIngress) bool {
		return strings.HasPrefix(conditionStatus(ai, controller.CondExternalIPAssigned), "True/") && ai.Status.Reason == "ConfigNotServedYet"
	})
	edit := func(corefile string) string {
		return corefile + "\nunreachable.invalid.:53 {\n    bind 192.0.2.123\n}\n"
	}
	configSync.corefileEdit.Store(&edit)
	defer configSync.corefileEdit.Store(nil)
	failed := strings.Count(readLog(t, dnsServer), "reload failed")
	configSync.hold.Store(false)
	waitLog(t, dnsServer, "reload failed", failed+1, time.Minute)
	// From now on the files reach CoreDNS as the operator writes them.
	configSync.corefileEdit.Store(nil)

	ai := waitFor(t, c, key, "a reload requested", time.Minute, func(ai *v1alpha1.AppsIngress) bool {
		return strings.Contains(ai.Status.Message, "every replica was asked to reload its configuration")
	})
	if ai.Status.Phase != v1alpha1.PhasePending || !strings.HasPrefix(conditionStatus(ai, controller.CondDNSConfigured), "False/") {
		t.Fatalf("a reload requested, but %s, DNSConfigured %s", ai.Status.Phase, conditionStatus(ai, controller.CondDNSConfigured))
	}
	requested := time.Now()
	waitFor(t, c, key, "Ready", time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))
	t.Logf("stuck CoreDNS: reload requested %s after the entry was written; Ready %s after the request",
		dnsRepairAfter, time.Since(requested).Round(time.Millisecond))
}
