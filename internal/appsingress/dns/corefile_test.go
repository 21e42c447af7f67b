package dns

import (
	"flag"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/appsingress/dns -update writes it)", err)
	}
	if string(want) != got {
		t.Fatalf("render differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

var opts = Options{Port: 5353, ProxyIPs: []netip.Addr{netip.MustParseAddr("172.30.0.10")}, Upstreams: []string{"/etc/resolv.conf"}, HealthAddr: ":8080", ReadyAddr: ":8181"}

func TestRenderGolden(t *testing.T) {
	files := Render(opts, routes.Examples())
	golden(t, "two-clusters", files[CorefileKey])
	golden(t, "two-clusters-prod-zone", files["vlan-clusters_prod.zone"])
	if len(files) != 2 {
		t.Fatalf("want the Corefile and prod's VLAN zone (dev has no vlanCIDRs), got %d files", len(files))
	}
	golden(t, "empty", Render(Options{}, nil)[CorefileKey])
}

// corefile is the rendered Corefile alone.
func corefile(o Options, cs []routes.Cluster) string { return Render(o, cs)[CorefileKey] }

func TestRenderIsIndependentOfOrder(t *testing.T) {
	cs := routes.Examples()
	reversed := []routes.Cluster{cs[1], cs[0]}
	if !maps.Equal(Render(opts, cs), Render(opts, reversed)) {
		t.Fatal("the render depends on the order of the clusters")
	}
}

func TestVLANViewOnlyWithCIDRsAndDefaultViewLast(t *testing.T) {
	out := corefile(opts, routes.Examples())
	if strings.Count(out, "view vlan-") != 1 {
		t.Fatalf("want exactly one view (dev has no vlanCIDRs):\n%s", out)
	}
	if !strings.Contains(out, "expr incidr(client_ip(), '10.10.0.0/16') || incidr(client_ip(), 'fd00:10::/64')") {
		t.Fatalf("the view does not list both CIDRs:\n%s", out)
	}
	// Blocks of one zone are tried in order; the unfiltered one must come after every view.
	if strings.Index(out, "view vlan-") > strings.Index(out, "\n.:5353 {") {
		t.Fatal("the default block comes before a view block")
	}
}

func TestClustersWithoutExternalIPGetNoRecords(t *testing.T) {
	cs := routes.Examples()
	cs[1].ExternalIPs = nil
	if out := corefile(opts, cs); strings.Contains(out, "dev.lab.example.org") {
		t.Fatalf("a cluster without external IP has records:\n%s", out)
	}
}

func TestWildcardRegexMatchesNamesBelowTheDomainOnly(t *testing.T) {
	re := wildcard("apps.prod.example.com")
	for name, want := range map[string]bool{
		"console-openshift-console.apps.prod.example.com.": true,
		"a.b.apps.prod.example.com.":                       true,
		"apps.prod.example.com.":                           false,
		"x.apps.prod.example.com.evil.com.":                false,
		"x.appsXprod.example.com.":                         false,
	} {
		if got := mustMatch(t, re, name); got != want {
			t.Errorf("%s on %s: %v, want %v", re, name, got, want)
		}
	}
}

func TestIPChangeRewritesOnlyTheZoneWithANewSerial(t *testing.T) {
	before := Render(opts, routes.Examples())
	cs := routes.Examples()
	cs[0].ExternalIPs = []netip.Addr{netip.MustParseAddr("192.0.2.99")}
	after := Render(opts, cs)
	if before[CorefileKey] != after[CorefileKey] {
		t.Fatal("an IP change rewrote the Corefile: CoreDNS would reload every server block")
	}
	const key = "vlan-clusters_prod.zone"
	if !strings.Contains(after[key], "*\t30\tIN\tA\t192.0.2.99\n") || strings.Contains(after[key], "2001:db8::10") {
		t.Fatalf("the zone does not hold exactly the new address:\n%s", after[key])
	}
	if serial(t, before[key]) == serial(t, after[key]) {
		t.Fatal("the SOA serial did not change: the file plugin would keep serving the old records")
	}
	if serial(t, after[key]) != serial(t, Render(opts, cs)[key]) {
		t.Fatal("the same records got another serial")
	}
}

func TestZoneFilesAreNamedInTheCorefileUnderZoneDir(t *testing.T) {
	o := opts
	o.ZoneDir = "/config"
	o.ZoneReloadInterval = "250ms"
	out := corefile(o, routes.Examples())
	if !strings.Contains(out, "file /config/vlan-clusters_prod.zone apps.prod.example.com. {\n        reload 250ms\n    }") {
		t.Fatalf("the VLAN view does not serve its zone file:\n%s", out)
	}
}

func serial(t *testing.T, zone string) string {
	t.Helper()
	for _, line := range strings.Split(zone, "\n") {
		if f := strings.Fields(line); len(f) >= 7 && f[3] == "SOA" {
			return f[6]
		}
	}
	t.Fatalf("no SOA in:\n%s", zone)
	return ""
}
