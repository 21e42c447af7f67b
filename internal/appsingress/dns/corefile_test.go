package dns

import (
	"flag"
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
	golden(t, "two-clusters", Render(opts, routes.Examples()))
	golden(t, "empty", Render(Options{}, nil))
}

func TestRenderIsIndependentOfOrder(t *testing.T) {
	cs := routes.Examples()
	reversed := []routes.Cluster{cs[1], cs[0]}
	if Render(opts, cs) != Render(opts, reversed) {
		t.Fatal("the render depends on the order of the clusters")
	}
}

func TestVLANViewOnlyWithCIDRsAndDefaultViewLast(t *testing.T) {
	out := Render(opts, routes.Examples())
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
	if out := Render(opts, cs); strings.Contains(out, "dev.lab.example.org") {
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
