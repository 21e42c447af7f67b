package localenv

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// ImportUpstreamImages builds the chart's CoreDNS and HAProxy images from the programs on this machine, tagged with
// the versions those programs are, and imports them into cluster's node: upstream's images cannot be pulled here,
// and if the chart's default tags drift from what the tests run, the Pods cannot start and the install fails.
func ImportUpstreamImages(ctx context.Context, cluster *devcluster.Cluster) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	coredns, err := devcluster.BuildCoreDNS(ctx, nil)
	if err != nil {
		return err
	}
	version, err := repo.RequiredVersion(filepath.Join(root, "tools", "devcluster", "binaries", "coredns", "go.mod"), "github.com/coredns/coredns")
	if err != nil {
		return err
	}
	out, err := exec.Command("haproxy", "-v").Output()
	if err != nil {
		return err
	}
	branch := regexp.MustCompile(`version (\d+\.\d+)`).FindStringSubmatch(string(out))
	if branch == nil {
		return fmt.Errorf("haproxy -v: %s", out)
	}
	for _, img := range []devcluster.HostImage{
		{
			Ref:   "docker.io/coredns/coredns:" + strings.TrimPrefix(version, "v"),
			Files: map[string]string{"/coredns": coredns},
			// As upstream's image: port 53 for a container allowed NET_BIND_SERVICE (hostNetwork).
			BindsLowPorts: []string{"/coredns"},
			Entrypoint:    []string{"/coredns"},
			User:          "65532:65532",
		},
		{
			// The chart's reload loop needs a shell, sleep, cp, mv, mkdir, sed, grep and cksum besides haproxy
			// (Debian's busybox has no cksum).
			Ref: "docker.io/library/haproxy:" + branch[1],
			Files: map[string]string{
				"/usr/local/sbin/haproxy": "/usr/sbin/haproxy", "/bin/busybox": "/bin/busybox", "/bin/cksum": "/usr/bin/cksum",
			},
			Links: map[string]string{
				"/bin/sh": "busybox", "/bin/sleep": "busybox", "/bin/kill": "busybox", "/bin/cp": "busybox", "/bin/mv": "busybox",
				"/bin/mkdir": "busybox", "/bin/sed": "busybox", "/bin/grep": "busybox",
			},
			Env:  []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/bin:/bin"},
			User: "65532:65532",
		},
	} {
		if err := cluster.BuildHostImage(ctx, img); err != nil {
			return err
		}
	}
	return nil
}
