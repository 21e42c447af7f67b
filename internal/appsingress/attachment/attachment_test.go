package attachment

import (
	"net"
	"slices"
	"strings"
	"testing"
)

func TestRequested(t *testing.T) {
	for _, tc := range []struct {
		annotation string
		want       []Network
		err        string
	}{
		{"", nil, ""},
		{"vlan-dns", []Network{{"vlan-dns", "net1"}}, ""},
		{"ops/vlan-dns, vlan-b@vlan0 ,vlan-c", []Network{{"ops/vlan-dns", "net1"}, {"vlan-b", "vlan0"}, {"vlan-c", "net3"}}, ""},
		{`[{"name":"vlan-dns","namespace":"ops","ips":["198.19.10.53/24"]},{"name":"b","interface":"eth9"}]`, []Network{{"ops/vlan-dns", "net1"}, {"b", "eth9"}}, ""},
		{`[{"name":"vlan-dns"`, nil, "not a JSON list"},
		{"ops/", nil, "has no name"},
		{"a,,b", nil, "network 2 has no name"},
	} {
		got, err := Requested(tc.annotation)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Requested(%q) = %v, %v; want an error with %q", tc.annotation, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Requested(%q) = %v, %v; want %v", tc.annotation, got, err, tc.want)
		}
	}
}

// The Downward API writes each annotation as key="Go-quoted value", one per line.
func TestFromDownwardAPI(t *testing.T) {
	content := "kubectl.kubernetes.io/restartedAt=\"2026-11-29T01:00:00Z\"\n" +
		`k8s.v1.cni.cncf.io/networks="[{\"name\":\"vlan-dns\",\"interface\":\"net1\"}]"` + "\n"
	got, err := FromDownwardAPI(content)
	if err != nil || got != `[{"name":"vlan-dns","interface":"net1"}]` {
		t.Fatalf("got %q, %v", got, err)
	}
	if got, err := FromDownwardAPI("a=\"b\"\n"); err != nil || got != "" {
		t.Fatalf("without the annotation: %q, %v", got, err)
	}
	if _, err := FromDownwardAPI(NetworksAnnotation + "=unquoted\n"); err == nil {
		t.Fatal("an unquoted value was accepted")
	}
}

func TestCheck(t *testing.T) {
	lo := Interface{Name: "lo", Up: true, Addrs: []net.IP{net.ParseIP("127.0.0.1")}}
	eth0 := Interface{Name: "eth0", Up: true, Addrs: []net.IP{net.ParseIP("10.244.0.5")}}
	net1 := Interface{Name: "net1", Up: true, Addrs: []net.IP{net.ParseIP("198.19.10.53"), net.ParseIP("fe80::1")}}
	dns := []Network{{"ops/vlan-dns", "net1"}}
	for _, tc := range []struct {
		name string
		have []Interface
		err  string
	}{
		{"attached", []Interface{lo, eth0, net1}, ""},
		// Multus not the CNI: the annotation is ignored and the Pod has its pod-network leg only.
		{"pod network only", []Interface{lo, eth0}, "has no such interface, only lo, eth0"},
		{"down", []Interface{lo, eth0, {Name: "net1", Addrs: net1.Addrs}}, "is down"},
		{"link-local only", []Interface{lo, eth0, {Name: "net1", Up: true, Addrs: []net.IP{net.ParseIP("fe80::1")}}}, "no address VLAN clients can reach"},
	} {
		err := Check(dns, tc.have)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
	if err := Check(nil, []Interface{lo, eth0}); err != nil {
		t.Errorf("no network asked for: %v", err)
	}
	// The test's own namespace has a loopback that is up.
	have, err := Local()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(have, func(i Interface) bool { return i.Name == "lo" && i.Up }) {
		t.Fatalf("Local() = %v, without lo", have)
	}
}
