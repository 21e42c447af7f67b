package devcluster

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

func TestOverrideArgs(t *testing.T) {
	got := overrideArgs(
		[]string{"--metricsPort=8000", "--v=2", "--controllerRuntimeMetricsAddress=:8080"},
		[]string{"--metricsPort=1234", "--controllerRuntimeMetricsAddress=0", "--kubeconfig=k"},
	)
	want := []string{"--v=2", "--metricsPort=1234", "--controllerRuntimeMetricsAddress=0", "--kubeconfig=k"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRequiredVersionReadsTheCommittedModules(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(binarySpecs(Options{WithKyverno: true, WithNode: true, WithMultus: true}), binTraefik) {
		v, err := s.version(root)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(v, "v") || strings.Count(v, ".") != 2 {
			t.Errorf("%s: version %q", s.file, v)
		}
	}
}

func TestKubeVersionLDFlags(t *testing.T) {
	got := kubeVersionLDFlags("v1.36.3")
	for _, want := range []string{
		"-X k8s.io/component-base/version.gitVersion=v1.36.3",
		"-X k8s.io/component-base/version.gitMajor=1",
		"-X k8s.io/client-go/pkg/version.gitMinor=36",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

// TestProcessLifecycle covers what down relies on: pid files, process groups, stop of an exited process.
func TestProcessLifecycle(t *testing.T) {
	dir := t.TempDir()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	// The child ignores SIGTERM and starts a grandchild, as a misbehaving component might; both must go.
	p := &process{name: "sleeper", bin: sh, dataDir: dir, args: []string{"-c", "trap '' TERM; sleep 300 & wait; : " + dir}}
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	pid := p.cmd.Process.Pid
	// Until the child has exec'd, /proc/<pid>/cmdline is still the test binary's; ownership shows once it has.
	poll.Until(t, 5*time.Second, fmt.Sprintf("pid %d recognised as started for %s", pid, dir), func() (bool, string, error) {
		return ownedBy(pid, dir), "", nil
	})
	time.Sleep(100 * time.Millisecond)
	defer func(d time.Duration) { stopTimeout = d }(stopTimeout)
	stopTimeout = 300 * time.Millisecond
	begin := time.Now()
	if err := stopPidFile(pidPath(dir, "sleeper"), dir); err != nil {
		t.Fatal(err)
	}
	if time.Since(begin) < stopTimeout {
		t.Errorf("stopped after %s although SIGTERM was ignored", time.Since(begin))
	}
	<-p.done
	// The orphaned grandchild is killed with the group but reaped by init a moment later.
	poll.Until(t, 2*time.Second, fmt.Sprintf("process group %d empty", pid), func() (bool, string, error) {
		return syscall.Kill(-pid, 0) != nil, "the group still has members", nil
	})
	if _, err := os.Stat(pidPath(dir, "sleeper")); !os.IsNotExist(err) {
		t.Errorf("pid file left behind: %v", err)
	}
	if err := p.stop(); err != nil {
		t.Errorf("stop of an exited process: %v", err)
	}
}
