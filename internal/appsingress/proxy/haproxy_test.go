package proxy

import (
	"flag"
	"os"
	"os/exec"
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
		t.Fatalf("%v (go test ./internal/appsingress/proxy -update writes it)", err)
	}
	if string(want) != got {
		t.Fatalf("render differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

var opts = Options{HTTPPort: 8080, HTTPSPort: 8443, APIPort: 6443}

func TestRenderGolden(t *testing.T) {
	golden(t, "two-clusters", Render(opts, routes.Examples()))
	golden(t, "empty", Render(Options{}, nil))
}

func TestRoutesBySNIAndHostToTheExternalIPs(t *testing.T) {
	out := Render(opts, routes.Examples())
	for _, want := range []string{
		"use_backend c-clusters_prod-https if { req_ssl_sni -i -m end .apps.prod.example.com }",
		"use_backend c-clusters_dev-http if { req.hdr(host),field(1,:),lower -m end .apps.dev.lab.example.org }",
		"use_backend c-clusters_prod-api if { req_ssl_sni -i api.prod.example.com }",
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

// TestHAProxyAcceptsTheRender runs Debian's haproxy -c on the renders (installed by make debian-packages).
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
	for name, cfg := range map[string]string{"two-clusters": Render(o, routes.Examples()), "empty": Render(o, nil)} {
		path := filepath.Join(t.TempDir(), name+".cfg")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
			t.Errorf("haproxy -c rejects the %s render: %v\n%s", name, err, out)
		}
	}
}

// The status frontend serves the id on the file's first line, which names its content: another set of routes is
// another id, the same set the same one.
func TestConfigIDNamesTheRoutes(t *testing.T) {
	a, b := Render(opts, routes.Examples()), Render(opts, routes.Examples()[:1])
	idA, idB := ConfigID(a), ConfigID(b)
	if len(idA) != 16 || idA == idB || ConfigID(Render(opts, routes.Examples())) != idA {
		t.Fatalf("ids %q and %q", idA, idB)
	}
	for _, want := range []string{
		"http-request return status 200 content-type text/plain string " + idA + " if { path /config-id }",
		"file /tmp/haproxy/rejected if { path /rejected }",
		"hard-stop-after 15m",
	} {
		if !strings.Contains(a, want) {
			t.Errorf("missing %q", want)
		}
	}
}

// A client of an API published on port 443 asks the proxy's 443 for it: the apps frontend routes the api name too.
func TestAPINameIsRoutedOnTheAppsPort(t *testing.T) {
	out := Render(opts, routes.Examples())
	front := out[strings.Index(out, "frontend apps-https"):strings.Index(out, "frontend apps-http\n")]
	if !strings.Contains(front, "use_backend c-clusters_prod-api if { req_ssl_sni -i api.prod.example.com }") {
		t.Fatalf("the apps frontend does not route the api name:\n%s", front)
	}
}

// The API's backend is the control plane's Service when there is one, kept resolved through the Pod's resolvers; an
// address needs none.
func TestAPIBackendNamesAreResolvedAgain(t *testing.T) {
	cs := routes.Examples()
	cs[0].APIBackend = "kube-apiserver.clusters-prod.svc.cluster.local:6443"
	out := Render(opts, cs)
	if !strings.Contains(out, "server api kube-apiserver.clusters-prod.svc.cluster.local:6443 resolvers pod\n") {
		t.Fatalf("the API backend is not the Service, resolved again:\n%s", out)
	}
	cs[0].APIBackend = "198.51.100.7:6443"
	if out := Render(opts, cs); !strings.Contains(out, "server api 198.51.100.7:6443\n") {
		t.Fatalf("an address backend:\n%s", out)
	}
}
