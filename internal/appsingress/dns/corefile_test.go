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
	if strings.Count(out, "view vlan-clusters") != 1 || strings.Count(out, "view vlan-api-") != 1 {
		t.Fatalf("want exactly one apps view and one api view (dev has no vlanCIDRs):\n%s", out)
	}
	if !strings.Contains(out, "expr incidr(client_ip(), '10.10.0.0/16') || incidr(client_ip(), 'fd00:10::/64') || name() == '_vlan-view-probe.apps.prod.example.com.'") {
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

// The API does not wait for the apps Service: a cluster whose Service has no address yet has its api name answered
// in both views, and no apps records.
func TestAPINameIsPublishedWithoutExternalIP(t *testing.T) {
	cs := routes.Examples()
	cs[0].ExternalIPs = nil
	cs[0].APIEndpoint = "198.51.100.7:6443"
	files := Render(opts, cs)
	out := files[CorefileKey]
	if strings.Contains(out, "apps.prod.example.com") || len(files) != 1 {
		t.Fatalf("apps records or a zone file without an external IP:\n%s", out)
	}
	if !strings.Contains(out, `answer "{{ .Name }} 30 IN A 172.30.0.10"`) {
		t.Fatalf("the default view does not answer the api name with the proxy:\n%s", out)
	}
	if !strings.Contains(out, `answer "{{ .Name }} 30 IN A 198.51.100.7"`) {
		t.Fatalf("the VLAN view does not answer the api name with the API server's address:\n%s", out)
	}
}

// VLAN clients cannot reach the proxy: their api answer is the endpoint's own address, a CNAME to its host, or (when
// the endpoint host is the api name) whatever the upstreams publish.
func TestVLANViewOfTheAPIName(t *testing.T) {
	for endpoint, want := range map[string]string{
		"[2001:db8::7]:6443":         `answer "{{ .Name }} 30 IN AAAA 2001:db8::7"`,
		"lb-1.infra.example.net:443": `answer "{{ .Name }} 30 IN CNAME lb-1.infra.example.net."`,
		"api.prod.example.com:6443":  "    forward . /etc/resolv.conf\n}\n\n# Default view",
		"API.prod.example.com.:6443": "    forward . /etc/resolv.conf\n}\n\n# Default view",
	} {
		cs := routes.Examples()
		cs[0].APIEndpoint = endpoint
		out := corefile(opts, cs)
		block := out[strings.Index(out, "api.prod.example.com.:5353 {"):]
		if !strings.Contains(block, want) || !strings.Contains(block, "view vlan-api-clusters_prod") {
			t.Errorf("%s: the VLAN api block lacks %q:\n%s", endpoint, want, block)
		}
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

// On a node's network CoreDNS answers VLAN clients on port 53 of the VLAN addresses only, with the same blocks as on
// its pod-network port; the probes are served once.
func TestVLANListenerRepeatsEveryBlockOnItsAddresses(t *testing.T) {
	o := opts
	o.VLANPort, o.VLANBind = 53, []string{"10.10.0.53", "vlan100"}
	out := corefile(o, routes.Examples())
	for _, block := range []string{"apps.prod.example.com.", "api.prod.example.com.", "."} {
		if !strings.Contains(out, "\n"+block+":5353 {\n") || !strings.Contains(out, "\n"+block+":53 {\n    bind 10.10.0.53 vlan100\n") {
			t.Errorf("block %s is not on both listeners:\n%s", block, out)
		}
	}
	if strings.Count(out, "health :8080") != 1 || strings.Count(out, "ready :8181") != 1 {
		t.Errorf("the probes are served more than once:\n%s", out)
	}
	if strings.Count(out, "bind ") != 3 {
		t.Errorf("the pod-network listener is limited to addresses:\n%s", out)
	}
}
