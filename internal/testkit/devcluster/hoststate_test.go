package devcluster

import (
	"slices"
	"testing"
)

func TestNodeRuleRemovalTouchesOnlyTheNodesRules(t *testing.T) {
	before := []string{
		"*filter", ":INPUT ACCEPT", ":FORWARD DROP", ":DOCKER -", "-A FORWARD -j DOCKER", "COMMIT",
	}
	now := []string{
		"*filter", ":INPUT ACCEPT", ":FORWARD DROP", ":DOCKER -", ":KUBE-FORWARD -", ":DEVCLUSTER-NODE -", ":OTHER -",
		"-A INPUT -m comment --comment x -j KUBE-FORWARD", "-A FORWARD -j DEVCLUSTER-NODE", "-A FORWARD -j DOCKER",
		"-A FORWARD -j OTHER", "-A KUBE-FORWARD -j ACCEPT", "-A DEVCLUSTER-NODE -i vi-cni0 ! -o vi-cni0 -j DROP", "COMMIT",
		"*nat", ":PREROUTING ACCEPT", "COMMIT",
	}
	want := "*filter\n" +
		"-D INPUT -m comment --comment x -j KUBE-FORWARD\n-D FORWARD -j DEVCLUSTER-NODE\n" +
		"-F KUBE-FORWARD\n-F DEVCLUSTER-NODE\n-X KUBE-FORWARD\n-X DEVCLUSTER-NODE\nCOMMIT\n"
	if got := nodeRuleRemoval(before, now); got != want {
		t.Errorf("removal script:\n%s\nwant:\n%s", got, want)
	}
	if got := nodeRuleRemoval(before, before); got != "" {
		t.Errorf("nothing new, but the script is %q", got)
	}
}

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
	// A Pod's veth vanishes with its network namespace between the listing and the deletion; restoring must go on.
	if err := deleteLink("vi-gone0"); err != nil {
		t.Fatalf("deleting a link that no longer exists: %v", err)
	}
}
