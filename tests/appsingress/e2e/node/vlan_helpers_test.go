//go:build node

package node_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
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
	nodetier.Eventually(t, time.Minute, "the probe Pod running", func() (bool, string, error) {
		p, err := node.Kube.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase), nil
	})
	return pod.Name
}
