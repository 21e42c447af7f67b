//go:build node

package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"os/exec"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

// setUpVLAN is localenv.SetUpVLAN for a test: undone when it ends.
func setUpVLAN(t *testing.T) {
	t.Helper()
	undo, err := localenv.SetUpVLAN(node.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := undo(); err != nil {
			t.Error(err)
		}
	})
}

func startRouter(t *testing.T, ip, cn, appsDomain string) {
	t.Helper()
	stop, err := localenv.StartVLANRouter(ip, cn, appsDomain)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
}

// probeImage is a Pod image with the clients users debug with: dig, openssl and curl (Debian's, with busybox's sh).
const probeImage = "localhost/appsingress/netprobe:1"

func importProbeImage(t *testing.T) {
	t.Helper()
	files := map[string]string{"/bin/busybox": "/bin/busybox"}
	for _, bin := range []string{"dig", "openssl", "curl"} {
		path, err := exec.LookPath(bin)
		if err != nil {
			t.Fatalf("%s is not installed (make debian-packages installs it as root): %v", bin, err)
		}
		files["/usr/bin/"+bin] = path
	}
	if err := node.Cluster.BuildHostImage(context.Background(), devcluster.HostImage{
		Ref: probeImage, Files: files, User: "65532:65532",
		Links: map[string]string{"/bin/sh": "busybox", "/bin/sleep": "busybox"},
	}); err != nil {
		t.Fatal(err)
	}
}

// runProbePod starts a Pod of probeImage in namespace and returns its name once it runs.
func runProbePod(t *testing.T, namespace string) string {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "netprobe", Namespace: namespace},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "probe", Image: probeImage, ImagePullPolicy: corev1.PullNever,
				Command: []string{"/bin/sleep", "3600"},
			}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	if _, err := node.Kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Minute, "the probe Pod running", func() (bool, string, error) {
		p, err := node.Kube.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase), nil
	})
	return pod.Name
}

// The secondary networks' attachments: a leg in the VLAN's bridge with a static address for CoreDNS and one for
// HAProxy, and a leg in the other VLAN's for CoreDNS, as a platform team defines them with Multus (the node runs it,
// see localenv.Options.Node).
const (
	multusNetworks         = "k8s.v1.cni.cncf.io/networks"
	vlanDNSAttachment      = "vlan-dns"
	vlanDNSAddress         = "198.19.10.53"
	vlanProxyAttachment    = "vlan-proxy"
	vlanProxyAddress       = "198.19.10.80"
	otherVLANDNSAttachment = "other-vlan-dns"
	otherVLANDNSAddress    = "198.19.20.53"
)

// multusSelection is the k8s.v1.cni.cncf.io/networks annotation asking for each attachment with the MAC address
// macFor gives its static address: a Pod that replaces another takes over its address and its MAC, so that the VLAN's
// hosts, whose neighbour tables hold that MAC, reach it at once (with a new MAC, they kept sending the old Pod's
// for up to the kernel's neighbour timeout: 72.5 s without an answer through the proxy in one rollout).
func multusSelection(t *testing.T, attachments map[string]string) string {
	t.Helper()
	var out []map[string]string
	for _, name := range slices.Sorted(maps.Keys(attachments)) {
		out = append(out, map[string]string{"name": name, "mac": macFor(attachments[name])})
	}
	data, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// macFor is a locally administered MAC address made of an IPv4 address: 02:00 and its four bytes.
func macFor(address string) string {
	ip := netip.MustParseAddr(address).As4()
	return fmt.Sprintf("02:00:%02x:%02x:%02x:%02x", ip[0], ip[1], ip[2], ip[3])
}

var networkAttachments = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}

func createVLANAttachments(t *testing.T) {
	t.Helper()
	for name, leg := range map[string]struct{ address, bridge string }{
		vlanDNSAttachment:      {vlanDNSAddress, localenv.VLANBridge},
		vlanProxyAttachment:    {vlanProxyAddress, localenv.VLANBridge},
		otherVLANDNSAttachment: {otherVLANDNSAddress, localenv.OtherVLANBridge},
	} {
		// The mac capability lets a Pod's network selection fix the leg's MAC address (multusSelection).
		config, err := json.Marshal(map[string]any{
			"cniVersion": "1.0.0", "name": name, "type": "bridge", "bridge": leg.bridge,
			"capabilities": map[string]any{"mac": true},
			"ipam":         map[string]any{"type": "static", "addresses": []any{map[string]any{"address": leg.address + "/24"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		nad := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
			"metadata": map[string]any{"name": name, "namespace": nodeChart},
			"spec":     map[string]any{"config": string(config)},
		}}
		if _, err := node.Dyn.Resource(networkAttachments).Namespace(nodeChart).Create(context.Background(), nad, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// networkStatus is an entry of the network-status annotation Multus writes on each Pod it attaches.
type networkStatus struct {
	Name string   `json:"name"`
	IPs  []string `json:"ips"`
	MAC  string   `json:"mac"`
}

// hasLeg says whether Multus recorded, in p's network-status, a leg that match accepts.
func hasLeg(p *corev1.Pod, match func(networkStatus) bool) bool {
	var status []networkStatus
	_ = json.Unmarshal([]byte(p.Annotations["k8s.v1.cni.cncf.io/network-status"]), &status)
	return slices.ContainsFunc(status, match)
}

// assertAttached waits (a minute at most) until every Pod of selector has the attachment's address, with the MAC
// address multusSelection asks for, as Multus recorded them in the Pod's network-status.
func assertAttached(t *testing.T, selector, attachment, address string) {
	t.Helper()
	// helm --wait returns once the new Pods are Ready; the old ReplicaSet's Pods, which have no attachment, may still
	// be listed for a moment.
	poll.Until(t, time.Minute, "every Pod "+selector+" with a "+attachment+" leg at "+address, func() (bool, string, error) {
		pods, err := node.Kube.CoreV1().Pods(nodeChart).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil || len(pods.Items) == 0 {
			return false, "no Pods", err
		}
		for _, p := range pods.Items {
			if !hasLeg(&p, func(s networkStatus) bool {
				return s.Name == nodeChart+"/"+attachment && slices.Contains(s.IPs, address) && s.MAC == macFor(address)
			}) {
				return false, fmt.Sprintf("Pod %s: network-status %q", p.Name, p.Annotations["k8s.v1.cni.cncf.io/network-status"]), nil
			}
		}
		return true, "", nil
	})
}
