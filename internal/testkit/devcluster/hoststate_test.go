package devcluster

import (
	"slices"
	"testing"
)

func TestHostStateDiff(t *testing.T) {
	before := &HostState{
		Sysctls: map[string]string{"kernel.panic": "1", "net.ipv4.ip_forward": "0"},
		Links:   []string{"eth0", "lo"}, Paths: map[string]bool{"/var/lib/kubelet": false},
	}
	after := &HostState{
		Sysctls: map[string]string{"kernel.panic": "10", "net.ipv4.ip_forward": "0"},
		Links:   []string{"eth0", "lo", "vi-node0"}, Paths: map[string]bool{"/var/lib/kubelet": true},
	}
	want := []string{
		"link added: vi-node0", "path /var/lib/kubelet: exists true, was false", "sysctl kernel.panic: 10, was 1",
	}
	if got := before.Diff(after); !slices.Equal(got, want) {
		t.Errorf("Diff = %q, want %q", got, want)
	}
	if got := before.Diff(before); len(got) != 0 {
		t.Errorf("a state differs from itself: %q", got)
	}
}

func TestDeleteLinkAcceptsALinkAlreadyGone(t *testing.T) {
	// The host's end of the node's link vanishes with the node's network namespace, asynchronously: a stop that finds
	// it gone must go on.
	if err := deleteLink("vi-gone0"); err != nil {
		t.Fatalf("deleting a link that no longer exists: %v", err)
	}
}
