// Command devcluster runs a local Kubernetes control plane (and optionally Kyverno) as processes:
//
//	go run ./tools/devcluster up [--with-kyverno] [--with-node [--with-multus] [--kyverno-on-node [--kyverno-previous]]] [--dir D]   start, return when ready
//	eval "$(go run ./tools/devcluster env [--dir D])"         point kubectl at it
//	go run ./tools/devcluster status [--dir D]                which components run
//	go run ./tools/devcluster down [--dir D]                  stop everything, remove D
//	go run ./tools/devcluster build [--with-kyverno] [--with-node [--with-multus] [--kyverno-on-node [--kyverno-previous]]] [--with-traefik]   only build the cached binaries
//
// D defaults to .devcluster at the repository root. See internal/testkit/devcluster for the Go API.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

const usage = `usage: devcluster <command> [flags]

commands:
  up [--with-kyverno] [--with-node [--with-multus] [--kyverno-on-node [--kyverno-previous]]] [--dir D] [--timeout T]  start a cluster in D and wait until it is ready
  down [--dir D]                                             stop the cluster in D, remove D, restore the host
  env [--dir D]                                              print 'export KUBECONFIG=D/admin.kubeconfig'
  status [--dir D]                                           list the components running from D
  build [--with-kyverno] [--with-node [--with-multus] [--kyverno-on-node [--kyverno-previous]]] [--with-traefik]  build the binaries into bin/devcluster only

--with-node runs a node (containerd, kubelet, kube-proxy, kube-scheduler, cluster DNS): root on Linux only.
--kyverno-on-node installs Kyverno (--with-kyverno) from its chart, its controllers as Pods on the node (images packed from its binaries).
--with-multus puts Multus in front of the node's Pod network, for Pods with secondary networks (NetworkAttachmentDefinitions).
--with-traefik builds Traefik too, the ingress controller virtual-ingress's traffic tests and bench run.

D defaults to <repository root>/.devcluster.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "devcluster:") {
			msg = "devcluster: " + msg
		}
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
}

func run(command string, args []string) error {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	dir := fs.String("dir", "", "data directory (default <repository root>/.devcluster)")
	withKyverno, withNode, withMultus, withTraefik := false, false, false, false
	kyvernoOnNode, kyvernoPrevious := false, false
	timeout := 3 * time.Minute
	if command == "up" || command == "build" {
		fs.BoolVar(&withKyverno, "with-kyverno", false, "also install and run Kyverno's admission and background controllers")
		fs.BoolVar(&withNode, "with-node", false, "also run a node, so Pods run (root on Linux)")
		fs.BoolVar(&kyvernoOnNode, "kyverno-on-node", false, "with --with-kyverno and --with-node, Kyverno from its chart as Pods on the node")
		fs.BoolVar(&withMultus, "with-multus", false, "with --with-node, Multus in front of the node's Pod network (secondary networks)")
		fs.BoolVar(&kyvernoPrevious, "kyverno-previous", false, "with --kyverno-on-node, the Kyverno release before the pinned one (binaries/kyverno-previous), to upgrade")
	}
	if command == "build" {
		fs.BoolVar(&withTraefik, "with-traefik", false, "also build Traefik (virtual-ingress's traffic tests and bench)")
	}
	if command == "up" {
		fs.DurationVar(&timeout, "timeout", timeout, "how long to wait for readiness once the binaries exist")
	}
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	root, err := repo.Root()
	if err != nil {
		return err
	}
	if *dir == "" {
		*dir = filepath.Join(root, ".devcluster")
	}
	if *dir, err = filepath.Abs(*dir); err != nil {
		return err
	}

	// Ctrl-C during a build or start-up cancels it; Start then stops what it started.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch command {
	case "up":
		if running := runningComponents(*dir); len(running) > 0 {
			fmt.Fprintf(os.Stderr, "devcluster: replacing the cluster running from %s (%s)\n", *dir, strings.Join(running, ", "))
		}
		c, err := devcluster.Start(ctx, devcluster.Options{
			Dir: *dir, RepoRoot: root, WithKyverno: withKyverno, KyvernoOnNode: kyvernoOnNode, KyvernoPrevious: kyvernoPrevious, WithNode: withNode, WithMultus: withMultus, Timeout: timeout, Detach: true,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "devcluster: running; logs in %s/logs; stop with: go run ./tools/devcluster down\n", c.Dir())
		fmt.Printf("export KUBECONFIG=%s\n", c.Kubeconfig())
		return nil
	case "down":
		return devcluster.Down(*dir)
	case "env":
		kubeconfig := filepath.Join(*dir, "admin.kubeconfig")
		if _, err := os.Stat(kubeconfig); err != nil {
			fmt.Fprintf(os.Stderr, "devcluster: no cluster in %s yet (run: go run ./tools/devcluster up)\n", *dir)
		}
		fmt.Printf("export KUBECONFIG=%s\n", kubeconfig)
		return nil
	case "status":
		running := runningComponents(*dir)
		if len(running) == 0 {
			fmt.Printf("no components running from %s\n", *dir)
			return nil
		}
		for _, r := range running {
			fmt.Println(r)
		}
		return nil
	case "build":
		if err := devcluster.Build(ctx, devcluster.Options{RepoRoot: root, WithKyverno: withKyverno, KyvernoOnNode: kyvernoOnNode, KyvernoPrevious: kyvernoPrevious, WithNode: withNode, WithMultus: withMultus}); err != nil || !withTraefik {
			return err
		}
		_, err := devcluster.BuildTraefik(ctx, os.Stderr)
		return err
	default:
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("unknown command %q", command)
	}
}

// runningComponents lists "name (pid N)" for every pid file in dir whose process is alive.
func runningComponents(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "pids", "*.pid"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || syscall.Kill(pid, 0) != nil {
			continue
		}
		out = append(out, fmt.Sprintf("%s (pid %d)", strings.TrimSuffix(filepath.Base(f), ".pid"), pid))
	}
	return out
}
