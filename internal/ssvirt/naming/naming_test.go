package naming_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
)

var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func TestNamespace(t *testing.T) {
	const id = "0b5a8c1e-8a0b-4c6e-9d1e-3f2a1b0c9d8e"
	cases := []struct{ org, vdc, want string }{
		{"acme", "web", "vdc-acme-web"},
		{"ACME Corp", "Web_Tier #1", "vdc-acme-corp-web-tier-1"},
		{"a--b", "--c--", "vdc-a-b-c"},
	}
	for _, c := range cases {
		if got := naming.Namespace(c.org, c.vdc, id, 0); got != c.want {
			t.Errorf("Namespace(%q, %q) = %q, want %q", c.org, c.vdc, got, c.want)
		}
	}
	long := strings.Repeat("x", 100)
	seen := map[string]bool{}
	for _, in := range [][2]string{{long, "a"}, {long, "b"}, {"acme", "web"}, {"acme", "WEB"}, {"é", "ü"}} {
		for attempt := range 3 {
			got := naming.Namespace(in[0], in[1], id, attempt)
			if len(got) > 63 || !dns1123.MatchString(got) {
				t.Errorf("Namespace(%q, %q, %d) = %q: not a DNS-1123 label", in[0], in[1], attempt, got)
			}
			if attempt > 0 && seen[got] {
				t.Errorf("attempt %d of %q/%q repeats %q", attempt, in[0], in[1], got)
			}
			seen[got] = true
		}
	}
	// Truncated names of different VDCs differ.
	if naming.Namespace(long, "a", id, 0) == naming.Namespace(long, "b", id, 0) {
		t.Error("two long names truncated to the same namespace")
	}
}

func TestURN(t *testing.T) {
	const id = "0b5a8c1e-8a0b-4c6e-9d1e-3f2a1b0c9d8e"
	urn := naming.URN(naming.KindVDC, id)
	if urn != "urn:vcloud:vdc:"+id {
		t.Fatalf("URN = %q", urn)
	}
	if got, ok := naming.ParseURN(naming.KindVDC, urn); !ok || got != id {
		t.Fatalf("ParseURN(%q) = %q, %v", urn, got, ok)
	}
	for _, bad := range []string{id, "urn:vcloud:org:" + id, "urn:vcloud:vdc:" + strings.ToUpper(id), "urn:vcloud:vdc:x' OR 1=1", ""} {
		if _, ok := naming.ParseURN(naming.KindVDC, bad); ok {
			t.Errorf("ParseURN accepted %q", bad)
		}
	}
}
