//go:build node

package nodecanary

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// childDir, set in the environment, makes the test binary a process that starts a node in that directory, says so
// on stdout and waits to be killed: the test process the SIGKILL case kills.
const childDir = "NODECANARY_CHILD_DIR"

const childReady = "node ready"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childDir); dir != "" {
		if _, err := devcluster.Start(context.Background(), devcluster.Options{Dir: dir, WithNode: true, Timeout: 5 * time.Minute}); err != nil {
			fmt.Fprintln(os.Stderr, "starting the node:", err)
			os.Exit(1)
		}
		fmt.Println(childReady)
		select {}
	}
	os.Exit(m.Run())
}

// TestNodeLeavesOtherSoftwareAlone is the canary: see the package comment.
func TestNodeLeavesOtherSoftwareAlone(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	// Under the repository (git-ignored), so that a failed CI run leaves the component logs where they can be read.
	dir := filepath.Join(root, ".devcluster", "node-canary")
	s := makeStandIns(t)
	before, err := devcluster.CaptureHost()
	if err != nil {
		t.Fatal(err)
	}
	forward, panicAfter := sysctl(t, "net.ipv4.ip_forward"), sysctl(t, "kernel.panic")
	t.Cleanup(func() { sysctl(t, "net.ipv4.ip_forward", forward); sysctl(t, "kernel.panic", panicAfter) })
	// Other software changing sysctls while the node runs: the kubelet sets kernel.panic to 10 and the bridge plugin
	// ip_forward to 1, so values unlike those show whether anything of the node's reached the host.
	duringRun := func(round int) (string, string) {
		f := map[string]string{"0": "1", "1": "0"}[sysctl(t, "net.ipv4.ip_forward")]
		return sysctl(t, "net.ipv4.ip_forward", f), sysctl(t, "kernel.panic", fmt.Sprint(20+round))
	}
	holdValues := func(after, f, p string) {
		t.Helper()
		if got := sysctl(t, "net.ipv4.ip_forward"); got != f {
			t.Errorf("after %s: net.ipv4.ip_forward is %s, was set to %s during the run", after, got, f)
		}
		if got := sysctl(t, "kernel.panic"); got != p {
			t.Errorf("after %s: kernel.panic is %s, was set to %s during the run", after, got, p)
		}
	}

	t.Run("normal stop", func(t *testing.T) {
		c, err := devcluster.Start(context.Background(), devcluster.Options{Dir: dir, WithNode: true, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("node Ready in %s", c.NodeReadyIn().Round(100*time.Millisecond))
		f, p := duringRun(1)
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		s.check(t, "a normal stop")
		holdValues("a normal stop", f, p)
	})

	t.Run("SIGKILL of the test process", func(t *testing.T) {
		child := exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), childDir+"="+dir)
		child.Stderr = os.Stderr
		out, err := child.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == childReady {
					ready <- true
					return
				}
			}
			ready <- false
		}()
		select {
		case ok := <-ready:
			if !ok {
				_ = child.Wait()
				t.Fatalf("the child process ended without a node: %v", child.ProcessState)
			}
		case <-time.After(6 * time.Minute):
			_ = child.Process.Kill()
			t.Fatal("the child process started no node within 6 minutes")
		}
		if len(devcluster.NodeProcesses()) == 0 {
			t.Fatal("the child's node runs no process in the node's cgroup: the check below would prove nothing")
		}
		f, p := duringRun(2)
		if err := child.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = child.Wait()
		poll.Until(t, 20*time.Second, "the node gone after the test process was killed", func() (bool, string, error) {
			procs, link := devcluster.NodeProcesses(), linkExists("vi-node0")
			return len(procs) == 0 && !link, fmt.Sprintf("processes %v, link vi-node0 %t", procs, link), nil
		})
		s.check(t, "SIGKILL of the test process")
		holdValues("SIGKILL of the test process", f, p)
	})

	t.Run("the next start's clean-up", func(t *testing.T) {
		c, err := devcluster.Start(context.Background(), devcluster.Options{Dir: dir, WithNode: true, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		s.check(t, "the next start's clean-up")
		f, p := duringRun(3)
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		s.check(t, "the stop after it")
		holdValues("the stop after it", f, p)
	})

	// Before the stand-ins go (cleanups run in reverse): the whole host as the node found it, once the two sysctls
	// changed on purpose are back (writing ip_forward also sets every interface's forwarding and accept_redirects).
	t.Cleanup(func() {
		sysctl(t, "net.ipv4.ip_forward", forward)
		sysctl(t, "kernel.panic", panicAfter)
		after, err := devcluster.CaptureHost()
		if err != nil {
			t.Fatal(err)
		}
		if changed := before.Diff(after); len(changed) > 0 {
			t.Errorf("the node left the host changed:\n  %s", strings.Join(changed, "\n  "))
		}
	})
}

func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}
