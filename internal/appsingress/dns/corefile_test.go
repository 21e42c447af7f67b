package dns

import (
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes/routestest"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/renderfile"
)

var opts = Options{Port: 5353, ProxyIPs: []netip.Addr{netip.MustParseAddr("172.30.0.10")}, Upstreams: []string{"/etc/resolv.conf"}, HealthAddr: ":8080", ReadyAddr: ":8181"}

func TestRenderGolden(t *testing.T) {
	files := Render(opts, routestest.Examples()).All()
	renderfile.Golden(t, "two-clusters", routestest.Dump(files))
	if len(files) != 5 {
		t.Fatalf("want the Corefile, one shard's blocks, answers and refusals, and prod's VLAN zone (dev has no vlanCIDRs), got %v", slices.Sorted(maps.Keys(files)))
	}
	renderfile.Golden(t, "empty", routestest.Dump(Render(Options{}, nil).All()))
}

// corefile is everything the rendered Corefile imports, with it: the configuration CoreDNS parses.
func corefile(o Options, cs []routes.Cluster) string {
	files := Render(o, cs).All()
	maps.DeleteFunc(files, func(name string, _ string) bool { return strings.HasSuffix(name, ".zone") })
	return routestest.Dump(files)
}

// Every change of what the Corefile imports changes the Corefile (see Render), and so does a reload request; a changed
// zone file, which the file plugin reloads by itself, does not.
func TestCorefileGenerationFollowsItsImports(t *testing.T) {
	cs := routestest.Examples()
	base := Render(opts, cs).Main[CorefileKey]
	if !strings.Contains(base, "template IN TXT "+GenerationName+". {") {
		t.Fatalf("the Corefile does not serve its generation:\n%s", base)
	}
	added := append(slices.Clone(cs), routestest.Fleet(1)...)
	if Render(opts, added).Main[CorefileKey] == base {
		t.Fatal("a cluster added (a new server block imported) leaves the Corefile as it was")
	}
	request := opts
	request.ReloadRequest = 7
	requested := Render(request, cs)
	if requested.Main[CorefileKey] == base {
		t.Fatal("a reload request leaves the Corefile as it was")
	}
	if n, err := ReloadRequestOf(Generation(requested.Shards, 7)); err != nil || n != 7 {
		t.Fatalf("ReloadRequestOf gives %d (%v), want 7", n, err)
	}
	if _, err := ReloadRequestOf("no generation"); err == nil {
		t.Fatal("ReloadRequestOf accepts a text without a request")
	}
	moved := slices.Clone(cs)
	moved[0].ExternalIPs = []netip.Addr{netip.MustParseAddr("192.0.2.99")}
	before, after := Render(opts, cs), Render(opts, moved)
	if after.Main[CorefileKey] != base {
		t.Fatal("a changed external IP (a zone file only) changes the Corefile, which restarts every server block")
	}
	if maps.Equal(before.All(), after.All()) {
		t.Fatal("a changed external IP changes no file")
	}
}

func TestRenderIsIndependentOfOrder(t *testing.T) {
	cs := routestest.Examples()
	reversed := []routes.Cluster{cs[1], cs[0]}
	if !maps.Equal(Render(opts, cs).All(), Render(opts, reversed).All()) {
		t.Fatal("the render depends on the order of the clusters")
	}
}

// The Corefile does not grow with the fleet (only its generation changes): it imports the shards, and each cluster's
// blocks, answers and zone file are in the one shard ShardOf names. 2,000 clusters with VLAN views on two listeners
// fit 8 ConfigMaps.
func TestClustersAreSplitAcrossShards(t *testing.T) {
	o := opts
	o.Shards = 8
	o.VLANPort, o.VLANBind = 53, []string{"10.10.0.53"}
	fleet := routestest.Fleet(2000)
	files := Render(o, fleet)
	empty := Render(o, nil)
	withoutGeneration := func(f routes.Files) string {
		return strings.ReplaceAll(f.Main[CorefileKey], Generation(f.Shards, 0), "")
	}
	if len(files.Main) != 1 || withoutGeneration(files) != withoutGeneration(empty) {
		t.Fatalf("the main files depend on the clusters beyond the generation: %v", slices.Sorted(maps.Keys(files.Main)))
	}
	if len(files.Shards) != 8 {
		t.Fatalf("%d shards, want 8", len(files.Shards))
	}
	for _, c := range fleet {
		in := 0
		for i, shard := range files.Shards {
			if strings.Contains(shard[routes.ShardName("default", i)+".conf"], "# "+c.Key+"\n") {
				in++
				if i != routes.ShardOf(c.Key, 8) || shard[zoneFileName(c)] == "" || !strings.Contains(shard[routes.ShardName("vlan", i)+".conf"], VLANProbeName(c)) {
					t.Fatalf("%s is in shard %d without its zone file and view, or not in its shard %d", c.Key, i, routes.ShardOf(c.Key, 8))
				}
			}
		}
		if in != 1 {
			t.Fatalf("%s is in %d shards", c.Key, in)
		}
	}
	for i, shard := range files.Shards {
		if n := routes.Size(shard); n > 900<<10 {
			t.Errorf("shard %d holds %d bytes", i, n)
		}
	}
	// The pod-network listener's catch-all imports the default answers, the VLAN listener's the refusals.
	for _, imp := range []string{"import /etc/coredns/vlan-*.conf\n", "    import /etc/coredns/default-*.conf\n", "    import /etc/coredns/refused-*.conf\n"} {
		if strings.Count(files.Main[CorefileKey], imp) != 1 {
			t.Errorf("the Corefile does not import %q once:\n%s", imp, files.Main[CorefileKey])
		}
	}
}

func TestVLANViewOnlyWithCIDRsAndDefaultViewLast(t *testing.T) {
	out := corefile(opts, routestest.Examples())
	if strings.Count(out, "view vlan-clusters") != 1 || strings.Count(out, "view vlan-api-") != 1 {
		t.Fatalf("want exactly one apps view and one api view (dev has no vlanCIDRs):\n%s", out)
	}
	if !strings.Contains(out, "expr incidr(client_ip(), '10.10.0.0/16') || incidr(client_ip(), 'fd00:10::/64') || name() == '_vlan-view-probe.apps.prod.example.com.'") {
		t.Fatalf("the view does not list both CIDRs:\n%s", out)
	}
	// Blocks of one zone are tried in order; the unfiltered one must come after every view.
	main := Render(opts, nil).Main[CorefileKey]
	if strings.Index(main, "import /etc/coredns/vlan-*.conf") > strings.Index(main, "\n.:5353 {") {
		t.Fatalf("the default block comes before the view blocks:\n%s", main)
	}
}

// A cluster is published before its apps Service has an address (its API endpoint is known at once): its blocks and
// answers are all there, and the address's arrival changes its zone file alone, which CoreDNS reloads without
// restarting a server block.
func TestExternalIPArrivalChangesOnlyTheZone(t *testing.T) {
	cs := routestest.Examples()
	cs[0].ExternalIPs = nil
	cs[0].APIEndpoint = "198.51.100.7:6443"
	before := Render(opts, cs).All()
	out := corefile(opts, cs)
	if !strings.Contains(out, `answer "{{ .Name }} 30 IN A 172.30.0.10"`) {
		t.Fatalf("the default view does not answer the api name with the proxy:\n%s", out)
	}
	if !strings.Contains(out, `answer "{{ .Name }} 30 IN A 198.51.100.7"`) {
		t.Fatalf("the VLAN view does not answer the api name with the API server's address:\n%s", out)
	}
	if !strings.Contains(out, `match "^(([-a-z0-9_]+\.)+apps\.(prod)|api\.(prod))\.example\.com\.$"`) {
		t.Fatalf("the apps and api names are not refused to other VLANs' clients:\n%s", out)
	}
	const key = "vlan-clusters_prod.zone"
	if strings.Contains(before[key], "\tIN\tA\t") || strings.Contains(before[key], "\tIN\tAAAA\t") {
		t.Fatalf("the zone of a cluster without an address has address records:\n%s", before[key])
	}
	cs[0].ExternalIPs = []netip.Addr{netip.MustParseAddr("192.0.2.99")}
	after := Render(opts, cs).All()
	for name := range after {
		if name != key && before[name] != after[name] {
			t.Fatalf("the first external IP rewrote %s: CoreDNS would reload every server block", name)
		}
	}
	if !strings.Contains(after[key], "*\t30\tIN\tA\t192.0.2.99\n") || serial(t, before[key]) == serial(t, after[key]) {
		t.Fatalf("the zone does not hold the first address under a new serial:\n%s", after[key])
	}
}

// VLAN clients cannot reach the proxy: their api answer is the endpoint's own address, a CNAME to its host, or (when
// the endpoint host is the api name) whatever the upstreams publish.
func TestVLANViewOfTheAPIName(t *testing.T) {
	for endpoint, want := range map[string]string{
		"[2001:db8::7]:6443":         `answer "{{ .Name }} 30 IN AAAA 2001:db8::7"`,
		"lb-1.infra.example.net:443": `answer "{{ .Name }} 30 IN CNAME lb-1.infra.example.net."`,
		"api.prod.example.com:6443":  "    forward . /etc/resolv.conf\n}\n",
		"API.prod.example.com.:6443": "    forward . /etc/resolv.conf\n}\n",
	} {
		cs := routestest.Examples()
		cs[0].APIEndpoint = endpoint
		out := corefile(opts, cs)
		block := out[strings.Index(out, "api.prod.example.com.:5353 {"):]
		block = block[:strings.Index(block, "\n}\n")+3]
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
	before := Render(opts, routestest.Examples()).All()
	cs := routestest.Examples()
	cs[0].ExternalIPs = []netip.Addr{netip.MustParseAddr("192.0.2.99")}
	after := Render(opts, cs).All()
	const key = "vlan-clusters_prod.zone"
	for name := range after {
		if name != key && before[name] != after[name] {
			t.Fatalf("an IP change rewrote %s: CoreDNS would reload every server block", name)
		}
	}
	if !strings.Contains(after[key], "*\t30\tIN\tA\t192.0.2.99\n") || strings.Contains(after[key], "2001:db8::10") {
		t.Fatalf("the zone does not hold exactly the new address:\n%s", after[key])
	}
	if serial(t, before[key]) == serial(t, after[key]) {
		t.Fatal("the SOA serial did not change: the file plugin would keep serving the old records")
	}
	if serial(t, after[key]) != serial(t, Render(opts, cs).All()[key]) {
		t.Fatal("the same records got another serial")
	}
}

func TestZoneFilesAreNamedInTheCorefileUnderZoneDir(t *testing.T) {
	o := opts
	o.ZoneDir = "/config"
	o.ZoneReloadInterval = "250ms"
	out := corefile(o, routestest.Examples())
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
	out := corefile(o, routestest.Examples())
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

// A client on one cluster's VLAN gets no answer about another cluster: every cluster's apps and api names are REFUSED
// to the clients of any cluster's VLAN CIDRs on the pod-network listener (its own names are taken by its VLAN views
// first), and to every client of the VLAN listener. Other names go on to the upstreams.
func TestOtherClustersNamesAreRefusedToVLANClients(t *testing.T) {
	o := opts
	o.VLANPort, o.VLANBind = 53, []string{"10.10.0.53"}
	out := corefile(o, routestest.Examples())
	for _, want := range []string{
		".:5353 {\n    view vlan-clients {\n        expr \"any(['10.10.0.0/16', 'fd00:10::/64'], incidr(client_ip(), #))\"\n    }\n    errors\n    import /etc/coredns/refused-*.conf\n    forward . /etc/resolv.conf\n}",
		".:53 {\n    bind 10.10.0.53\n    errors\n    import /etc/coredns/refused-*.conf\n    forward . /etc/resolv.conf\n}",
		"template ANY ANY example.com. {\n        match \"^(([-a-z0-9_]+\\.)+apps\\.(prod)|api\\.(prod))\\.example\\.com\\.$\"\n        rcode REFUSED",
		"template ANY ANY lab.example.org. {\n        match \"^(([-a-z0-9_]+\\.)+apps\\.(dev))\\.lab\\.example\\.org\\.$\"\n        rcode REFUSED",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing:\n%s\nin:\n%s", want, out)
		}
	}
	// The VLAN listener answers no default view: the proxy's address is for the pod network.
	if strings.Count(out, "import /etc/coredns/default-*.conf") != 1 {
		t.Errorf("the default answers are imported on the VLAN listener too:\n%s", out)
	}
	// The refusals' expressions match the clusters' names and nothing else.
	re := regexp.MustCompile(`^(([-a-z0-9_]+\.)+apps\.(prod)|api\.(prod))\.example\.com\.$`)
	for name, want := range map[string]bool{
		"console.apps.prod.example.com.": true, "api.prod.example.com.": true, "a.b.apps.prod.example.com.": true,
		"apps.prod.example.com.": false, "api.prod2.example.com.": false, "x.apps.production.example.com.": false, "www.example.com.": false,
	} {
		if re.MatchString(name) != want {
			t.Errorf("%s refused: %v, want %v", name, !want, want)
		}
	}
	// No VLAN CIDRs anywhere: no block for VLAN clients.
	withoutVLANs := slices.DeleteFunc(routestest.Examples(), func(c routes.Cluster) bool { return len(c.VLANCIDRs) > 0 })
	if out := corefile(opts, withoutVLANs); len(withoutVLANs) == 0 || strings.Contains(out, "view vlan-clients") {
		t.Errorf("a vlan-clients block without VLAN CIDRs (%d clusters):\n%s", len(withoutVLANs), out)
	}
}
