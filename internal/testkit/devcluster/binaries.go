package devcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// binarySpec says how to build one component. The binaries come from nested Go modules under
// tools/devcluster/binaries so that the main module never requires k8s.io/kubernetes; their go.mod/go.sum pin
// every version, and the version of versionModule names the cached file, so bumping it in go.mod is all it
// takes to get a rebuild.
type binarySpec struct {
	file          string // bin/devcluster/<file>-<version>
	module        string // directory under tools/devcluster/binaries
	versionModule string
	pkg           string
	ldflags       func(version string) string
}

var (
	binEtcd = binarySpec{
		file: "etcd", module: "kubernetes", versionModule: "go.etcd.io/etcd/server/v3",
		pkg: "go.etcd.io/etcd/server/v3",
	}
	binAPIServer = binarySpec{
		file: "kube-apiserver", module: "kubernetes", versionModule: "k8s.io/kubernetes",
		pkg: "k8s.io/kubernetes/cmd/kube-apiserver", ldflags: kubeVersionLDFlags,
	}
	binControllerManager = binarySpec{
		file: "kube-controller-manager", module: "kubernetes", versionModule: "k8s.io/kubernetes",
		pkg: "k8s.io/kubernetes/cmd/kube-controller-manager", ldflags: kubeVersionLDFlags,
	}
	binKubelet = binarySpec{
		file: "kubelet", module: "kubernetes", versionModule: "k8s.io/kubernetes",
		pkg: "k8s.io/kubernetes/cmd/kubelet", ldflags: kubeVersionLDFlags,
	}
	binKubeProxy = binarySpec{
		file: "kube-proxy", module: "kubernetes", versionModule: "k8s.io/kubernetes",
		pkg: "k8s.io/kubernetes/cmd/kube-proxy", ldflags: kubeVersionLDFlags,
	}
	binScheduler = binarySpec{
		file: "kube-scheduler", module: "kubernetes", versionModule: "k8s.io/kubernetes",
		pkg: "k8s.io/kubernetes/cmd/kube-scheduler", ldflags: kubeVersionLDFlags,
	}
	binCoreDNS = binarySpec{
		file: "coredns", module: "coredns", versionModule: "github.com/coredns/coredns", pkg: "github.com/coredns/coredns",
	}
	binMultus = binarySpec{
		file: "multus", module: "multus", versionModule: "gopkg.in/k8snetworkplumbingwg/multus-cni.v4",
		pkg: "gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus",
	}
	binTraefik = binarySpec{
		file: "traefik", module: "traefik", versionModule: "github.com/traefik/traefik/v3",
		pkg: "github.com/traefik/traefik/v3/cmd/traefik", ldflags: traefikVersionLDFlags,
	}
	binKyverno = binarySpec{
		file: "kyverno", module: kyvernoModule, versionModule: "github.com/kyverno/kyverno",
		pkg: "github.com/kyverno/kyverno/cmd/kyverno", ldflags: kyvernoVersionLDFlags,
	}
	binKyvernoBackground = binarySpec{
		file: "kyverno-background-controller", module: kyvernoModule, versionModule: "github.com/kyverno/kyverno",
		pkg: "github.com/kyverno/kyverno/cmd/background-controller", ldflags: kyvernoVersionLDFlags,
	}
	// The other programs of Kyverno's chart, for KyvernoOnNode: its cleanup and reports controllers, the admission
	// controller's init container, and the images of its hooks (the CLI migrates resources after an upgrade, the
	// readiness checker removes webhooks before an uninstall).
	binKyvernoCleanup = binarySpec{
		file: "kyverno-cleanup-controller", module: kyvernoModule, versionModule: "github.com/kyverno/kyverno",
		pkg: "github.com/kyverno/kyverno/cmd/cleanup-controller", ldflags: kyvernoVersionLDFlags,
	}
	binKyvernoReports = binarySpec{
		file: "kyverno-reports-controller", module: kyvernoModule, versionModule: "github.com/kyverno/kyverno",
		pkg: "github.com/kyverno/kyverno/cmd/reports-controller", ldflags: kyvernoVersionLDFlags,
	}
	binKyvernoInit = binarySpec{
		file: "kyverno-init", module: kyvernoModule, versionModule: "github.com/kyverno/kyverno",
		pkg: "github.com/kyverno/kyverno/cmd/kyverno-init", ldflags: kyvernoVersionLDFlags,
	}
	binKyvernoCLI = binarySpec{
		file: "kyverno-cli", module: kyvernoModule, versionModule: "github.com/kyverno/kyverno",
		pkg: "github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno", ldflags: kyvernoVersionLDFlags,
	}
	binKyvernoReadinessChecker = binarySpec{
		file: "kyverno-readiness-checker", module: kyvernoModule, versionModule: "github.com/kyverno/kyverno",
		pkg: "github.com/kyverno/kyverno/cmd/readiness-checker", ldflags: kyvernoVersionLDFlags,
	}
)

// moduleDir is the nested module s is built from.
func (s binarySpec) moduleDir(repoRoot string) string {
	return filepath.Join(repoRoot, "tools", "devcluster", "binaries", s.module)
}

// version is the version of s's versionModule its module pins: what it is built at, and names its cached file.
func (s binarySpec) version(repoRoot string) (string, error) {
	return repo.RequiredVersion(filepath.Join(s.moduleDir(repoRoot), "go.mod"), s.versionModule)
}

// kyvernoModule and kyvernoPreviousModule are the directories under tools/devcluster/binaries of the pinned Kyverno
// release and of the one before it, which KyvernoPrevious installs for UpgradeKyverno to upgrade.
const (
	kyvernoModule         = "kyverno"
	kyvernoPreviousModule = "kyverno-previous"
)

// inModule is s built from another Kyverno module: module kyvernoPreviousModule names the file apart, so both
// releases' binaries are cached side by side.
func (s binarySpec) inModule(module string) binarySpec {
	if module != s.module {
		s.file += "-previous"
		s.module = module
	}
	return s
}

// kubeVersionLDFlags stamps the version the Makefile of kubernetes would. Without it the server reports
// v0.0.0-master+$Format:%H$, which clients (kubectl, Helm's kubeVersion checks) cannot parse.
func kubeVersionLDFlags(version string) string {
	major, minor := "", ""
	if parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3); len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}
	var b strings.Builder
	b.WriteString("-s -w")
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		fmt.Fprintf(&b, " -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s", pkg, version, pkg, major, pkg, minor)
	}
	return b.String()
}

// traefikVersionLDFlags stamps the version Traefik reports. A stamped build would check for newer releases,
// so whoever runs it passes --global.checkNewVersion=false.
func traefikVersionLDFlags(version string) string {
	return "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=" + version
}

func kyvernoVersionLDFlags(version string) string {
	return "-s -w -X github.com/kyverno/kyverno/pkg/version.BuildVersion=" + version
}

// binaries builds whatever of specs is not cached yet and returns the path of each, keyed by spec file name.
func binaries(ctx context.Context, repoRoot, binDir string, progress io.Writer, specs ...binarySpec) (map[string]string, error) {
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return nil, err
	}
	// Built binaries are renamed into place only when complete, so when all exist there is nothing to wait for:
	// the lock below may be held for many minutes by a build of other components.
	if paths, ok := cachedBinaries(repoRoot, binDir, specs); ok {
		return paths, nil
	}
	// Tests in several packages may start clusters at once; one builds, the others wait and reuse.
	unlock, err := lockBuilds(binDir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	paths := map[string]string{}
	for _, s := range specs {
		version, err := s.version(repoRoot)
		if err != nil {
			return nil, err
		}
		out := filepath.Join(binDir, s.file+"-"+version)
		paths[s.file] = out
		if _, err := os.Stat(out); err == nil {
			continue
		}
		if err := build(ctx, s.moduleDir(repoRoot), s, version, out, progress); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// cachedBinaries returns the paths of specs when every one of them is already built.
func cachedBinaries(repoRoot, binDir string, specs []binarySpec) (map[string]string, bool) {
	paths := map[string]string{}
	for _, s := range specs {
		version, err := s.version(repoRoot)
		if err != nil {
			return nil, false
		}
		out := filepath.Join(binDir, s.file+"-"+version)
		if _, err := os.Stat(out); err != nil {
			return nil, false
		}
		paths[s.file] = out
	}
	return paths, true
}

func build(ctx context.Context, modDir string, s binarySpec, version, out string, progress io.Writer) error {
	fmt.Fprintf(progress, "devcluster: building %s %s (only once; cached as %s)\n", s.file, version, out)
	args := []string{"build", "-o", out + ".tmp"}
	if s.ldflags != nil {
		args = append(args, "-ldflags", s.ldflags(version))
	}
	args = append(args, s.pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = modDir
	// Static binaries, and no go.work from a parent directory changing which versions get built.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	cmd.Stdout = progress
	cmd.Stderr = progress

	start := time.Now()
	stopTicker := make(chan struct{})
	go func() {
		// A cold build of kube-apiserver takes minutes and go build prints nothing meanwhile.
		t := time.NewTicker(30 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				fmt.Fprintf(progress, "devcluster:   still building %s (%s)\n", s.file, time.Since(start).Round(time.Second))
			case <-stopTicker:
				return
			}
		}
	}()
	err := cmd.Run()
	close(stopTicker)
	if err != nil {
		_ = os.Remove(out + ".tmp")
		return fmt.Errorf("building %s in %s: %w", s.pkg, modDir, err)
	}
	// Renamed into place only when complete, so an interrupted build never looks cached.
	if err := os.Rename(out+".tmp", out); err != nil {
		return err
	}
	fmt.Fprintf(progress, "devcluster: built %s in %s\n", s.file, time.Since(start).Round(time.Second))
	return nil
}

// Build builds (or finds cached) the binaries Start would use with opts, without starting anything:
// for warming a CI cache, or to take the minutes of a cold build outside a test's timeout.
func Build(ctx context.Context, opts Options) error {
	if opts.RepoRoot == "" {
		var err error
		if opts.RepoRoot, err = repo.Root(); err != nil {
			return err
		}
	}
	if opts.BinDir == "" {
		opts.BinDir = filepath.Join(opts.RepoRoot, "bin", "devcluster")
	}
	if opts.Progress == nil {
		opts.Progress = os.Stderr
	}
	bins, err := binaries(ctx, opts.RepoRoot, opts.BinDir, opts.Progress, binarySpecs(opts)...)
	if err != nil || !opts.KyvernoOnNode {
		return err
	}
	_, err = kyvernoLayoutsFor(ctx, opts, bins)
	return err
}

func binarySpecs(opts Options) []binarySpec {
	specs := []binarySpec{binEtcd, binAPIServer, binControllerManager}
	if opts.WithNode {
		specs = append(specs, binCoreDNS, binScheduler, binKubelet, binKubeProxy)
	}
	if opts.WithNode && opts.WithMultus {
		specs = append(specs, binMultus)
	}
	if opts.WithKyverno {
		specs = append(specs, binKyverno, binKyvernoBackground)
	}
	if opts.WithKyverno && opts.KyvernoOnNode {
		specs = append(specs, binKyvernoCleanup, binKyvernoReports, binKyvernoInit, binKyvernoCLI, binKyvernoReadinessChecker)
	}
	if opts.WithKyverno && opts.KyvernoOnNode && opts.KyvernoPrevious {
		for _, img := range kyvernoImages {
			if s := img.bin.inModule(kyvernoPreviousModule); !slices.ContainsFunc(specs, func(o binarySpec) bool { return o.file == s.file }) {
				specs = append(specs, s)
			}
		}
	}
	return specs
}

// lockBuilds takes the exclusive lock on binDir that every build of local-cluster binaries and images holds, so that
// one test package builds while the others wait and then reuse what it built; the function it returns releases it.
func lockBuilds(binDir string) (unlock func(), err error) {
	lock, err := os.OpenFile(filepath.Join(binDir, ".build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		_ = lock.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		_ = lock.Close()
	}, nil
}
