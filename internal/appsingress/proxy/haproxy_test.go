package proxy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes/routestest"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/renderfile"
)

var opts = Options{HTTPPort: 8080, HTTPSPort: 8443, APIPort: 6443}

// all is every rendered file as one text.
func all(o Options, cs []routes.Cluster) string { return routestest.Dump(Render(o, cs).All()) }

func TestRenderGolden(t *testing.T) {
	renderfile.Golden(t, "two-clusters", all(opts, routestest.Examples()))
	renderfile.Golden(t, "empty", all(Options{}, nil))
}

func TestRoutesBySNIAndHostToTheExternalIPs(t *testing.T) {
	out := all(opts, routestest.Examples())
	for _, want := range []string{
		"use_backend %[req_ssl_sni,lower,map_end(apps-https-0.map)] if { req_ssl_sni,lower,map_end(apps-https-0.map) -m found }",
		"use_backend %[req.hdr(host),field(1,:),lower,map_end(apps-http-0.map)] if { req.hdr(host),field(1,:),lower,map_end(apps-http-0.map) -m found }",
		"use_backend %[req_ssl_sni,lower,map(api-0.map)] if { req_ssl_sni,lower,map(api-0.map) -m found }",
		"\n.apps.prod.example.com c-clusters_prod-https\n",
		"\n.apps.dev.lab.example.org c-clusters_dev-http\n",
		"\napi.prod.example.com c-clusters_prod-api\n",
		"server ip0 192.0.2.10:443",
		"server ip1 ipv6@2001:db8::10:443",
		"server ip0 192.0.2.20:8443",
		"server ip0 192.0.2.20:8080",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(out, "c-clusters_dev-api") {
		t.Error("a cluster without API endpoint has an api route")
	}
	// Passthrough: nothing in the file may terminate TLS.
	if strings.Contains(out, " ssl ") || strings.Contains(out, "crt ") {
		t.Errorf("the configuration terminates TLS:\n%s", out)
	}
}

// TestHAProxyAcceptsTheRender runs Debian's haproxy -c on the renders (installed by make debian-packages), loading
// the directory as the reloader does.
func TestHAProxyAcceptsTheRender(t *testing.T) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		t.Fatal("haproxy is not installed (make debian-packages installs it): ", err)
	}
	o := opts
	o.StateDir = t.TempDir()
	if err := os.WriteFile(filepath.Join(o.StateDir, RejectedFile), []byte("none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sharded := o
	sharded.Shards = 3
	for name, files := range map[string]routes.Files{
		"two-clusters": Render(o, routestest.Examples()), "empty": Render(o, nil), "three shards": Render(sharded, routestest.Fleet(50)),
	} {
		dir := t.TempDir()
		for file, content := range files.All() {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if out, err := exec.Command(bin, "-c", "-C", dir, "-f", dir).CombinedOutput(); err != nil {
			t.Errorf("haproxy -c rejects the %s render: %v\n%s", name, err, out)
		}
	}
}

// The status frontend serves each file's id, which names its content: the main file's does not depend on the
// clusters, a shard's changes with its routes (its maps included) and with nothing else.
func TestConfigIDNamesTheRoutes(t *testing.T) {
	a, b := Render(opts, routestest.Examples()), Render(opts, routestest.Examples()[:1])
	mainA, shardA, shardB := ConfigID(a.Main[MainKey]), ConfigID(a.Shards[0][ShardFile(0)]), ConfigID(b.Shards[0][ShardFile(0)])
	if len(shardA) != 16 || shardA == shardB || ConfigID(Render(opts, routestest.Examples()).Shards[0][ShardFile(0)]) != shardA {
		t.Fatalf("shard ids %q and %q", shardA, shardB)
	}
	if mainA != ConfigID(b.Main[MainKey]) || mainA == shardA {
		t.Fatalf("main ids %q and %q", mainA, ConfigID(b.Main[MainKey]))
	}
	for _, want := range []string{
		"http-request return status 200 content-type text/plain string " + mainA + " if { path /config-id }",
		"file /tmp/haproxy/rejected if { path /rejected }",
		"use_backend shard-status-0 if { path /config-id/0 }",
		"hard-stop-after 15m",
	} {
		if !strings.Contains(a.Main[MainKey], want) {
			t.Errorf("missing %q", want)
		}
	}
	if !strings.Contains(a.Shards[0][ShardFile(0)], "backend shard-status-0\n    mode http\n    http-request return status 200 content-type text/plain string "+shardA+"\n") {
		t.Errorf("the shard does not serve its id:\n%s", a.Shards[0][ShardFile(0)])
	}
	// A route that changes a map alone (another backend name for the same suffix cannot happen, but another suffix
	// for the same backend can: a renamed cluster) changes the id.
	renamed := routestest.Examples()
	renamed[1].Name = "dev2"
	if ConfigID(Render(opts, renamed).Shards[0][ShardFile(0)]) == shardA {
		t.Error("a renamed cluster keeps its shard's id")
	}
}

// A client of an API published on port 443 asks the proxy's 443 for it: the apps frontend routes the api name too.
func TestAPINameIsRoutedOnTheAppsPort(t *testing.T) {
	out := Render(opts, routestest.Examples()).Main[MainKey]
	front := out[strings.Index(out, "frontend apps-https"):strings.Index(out, "frontend apps-http\n")]
	if !strings.Contains(front, "use_backend %[req_ssl_sni,lower,map(api-0.map)]") {
		t.Fatalf("the apps frontend does not route the api names:\n%s", front)
	}
}

// The API's backend is the control plane's Service when there is one, kept resolved through the Pod's resolvers; an
// address needs none.
func TestAPIBackendNamesAreResolvedAgain(t *testing.T) {
	cs := routestest.Examples()
	cs[0].APIBackend = "kube-apiserver.clusters-prod.svc.cluster.local:6443"
	out := all(opts, cs)
	if !strings.Contains(out, "server api kube-apiserver.clusters-prod.svc.cluster.local:6443 resolvers pod\n") {
		t.Fatalf("the API backend is not the Service, resolved again:\n%s", out)
	}
	cs[0].APIBackend = "198.51.100.7:6443"
	if out := all(opts, cs); !strings.Contains(out, "server api 198.51.100.7:6443\n") {
		t.Fatalf("an address backend:\n%s", out)
	}
}
