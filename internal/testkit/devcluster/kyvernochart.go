package devcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
)

// kyvernoImage is one image Kyverno's chart runs, made from one of the Kyverno programs the cluster builds.
type kyvernoImage struct {
	values     string // where the chart's values name the image
	registry   string // the chart's default registry for it
	repository string
	bin        binarySpec
}

// kyvernoImages are every image of the chart: the four controllers and the admission controller's init container
// for the install; the CLI (post-upgrade migration) and the readiness checker (pre-delete webhook removal, `helm
// test`) for its hooks, so that an upgrade, an uninstall and `helm test` run as they do for users.
var kyvernoImages = []kyvernoImage{
	{"admissionController.container.image", "reg.kyverno.io", "kyverno/kyverno", binKyverno},
	{"admissionController.initContainer.image", "reg.kyverno.io", "kyverno/kyvernopre", binKyvernoInit},
	{"backgroundController.image", "reg.kyverno.io", "kyverno/background-controller", binKyvernoBackground},
	{"cleanupController.image", "reg.kyverno.io", "kyverno/cleanup-controller", binKyvernoCleanup},
	{"reportsController.image", "reg.kyverno.io", "kyverno/reports-controller", binKyvernoReports},
	{"crds.migration.image", "reg.kyverno.io", "kyverno/kyverno-cli", binKyvernoCLI},
	{"webhooksCleanup.image", "ghcr.io", "kyverno/readiness-checker", binKyvernoReadinessChecker},
	{"test.image", "ghcr.io", "kyverno/readiness-checker", binKyvernoReadinessChecker},
}

// kyvernoAdmissionReplicas is the admission controller's replica count on the node, as the chart recommends for
// production (it defaults to 1): the webhooks then stay served while one Pod goes.
const kyvernoAdmissionReplicas = 2

// kyvernoLayoutsFor packs the images of every Kyverno release opts installs (kyvernoImageLayouts) and returns their
// layouts by module, then by image repository.
func kyvernoLayoutsFor(ctx context.Context, opts Options, bins map[string]string) (map[string]map[string]string, error) {
	modules := []string{kyvernoModule}
	if opts.KyvernoPrevious {
		modules = append(modules, kyvernoPreviousModule)
	}
	layouts := map[string]map[string]string{}
	for _, m := range modules {
		l, err := kyvernoImageLayouts(ctx, opts.RepoRoot, opts.BinDir, bins, m)
		if err != nil {
			return nil, err
		}
		layouts[m] = l
	}
	return layouts, nil
}

// kyvernoImageLayouts packs each program of kyvernoImages built from module (bins: the built binaries by spec file)
// with tools/images into an OCI layout under binDir/images, named after the binary file, so once per version. It
// returns each layout's directory by image repository.
func kyvernoImageLayouts(ctx context.Context, repoRoot, binDir string, bins map[string]string, module string) (map[string]string, error) {
	dir := filepath.Join(binDir, "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	layouts := map[string]string{}
	complete := true
	for _, img := range kyvernoImages {
		out := filepath.Join(dir, filepath.Base(bins[img.bin.inModule(module).file]))
		layouts[img.registry+"/"+img.repository] = out
		if _, err := os.Stat(filepath.Join(out, "index.json")); err != nil {
			complete = false
		}
	}
	// Layouts are renamed into place only when complete, so when all exist there is nothing to wait for: the lock
	// may be held for many minutes by a build of other components.
	if complete {
		return layouts, nil
	}
	unlock, err := lockBuilds(binDir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	for _, img := range kyvernoImages {
		spec := img.bin.inModule(module)
		bin := bins[spec.file]
		if bin == "" {
			return nil, fmt.Errorf("devcluster: %s was not built", spec.file)
		}
		// The binary's file name carries its version, so a new version is a new layout.
		out := filepath.Join(dir, filepath.Base(bin))
		layouts[img.registry+"/"+img.repository] = out
		if _, err := os.Stat(filepath.Join(out, "index.json")); err == nil {
			continue
		}
		version, err := spec.version(repoRoot)
		if err != nil {
			return nil, err
		}
		_ = os.RemoveAll(out + ".tmp")
		cmd := exec.CommandContext(ctx, "go", "run", "./tools/images", "--binary", bin, "--name", path.Base(img.repository),
			"--out", out+".tmp", "--platforms", "linux/"+runtime.GOARCH, "--version", version,
			"--source", "https://github.com/kyverno/kyverno")
		cmd.Dir = repoRoot
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("packing %s into an image: %w: %s", bin, err, msg)
		}
		// Renamed into place only when complete, so an interrupted run never looks cached.
		if err := os.Rename(out+".tmp", out); err != nil {
			return nil, err
		}
	}
	return layouts, nil
}

// installKyvernoChart installs Kyverno as users do: `helm install --wait` of its chart at the pinned version (with
// KyvernoPrevious, the release before it), its Pods on the node from the images kyvernoImageLayouts packed, its
// webhooks served through its Service with the certificates it makes itself, its RBAC its own. Only the CRDs come
// from config/crds (server-side, as startKyverno applies them): the chart's CRDs live partly in remote subcharts the
// module does not carry.
func (c *Cluster) installKyvernoChart(ctx context.Context) error {
	if c.node == nil {
		return fmt.Errorf("devcluster: KyvernoOnNode needs WithNode")
	}
	module := kyvernoModule
	if c.opts.KyvernoPrevious {
		module = kyvernoPreviousModule
	}
	return c.kyvernoRelease(ctx, module, "install", func(r *helmrelease.Release, values map[string]any, wait time.Duration) error {
		return r.InstallWait(ctx, values, wait)
	})
}

// UpgradeKyverno upgrades the Kyverno of a cluster started with KyvernoPrevious to the pinned release as users do:
// its CRDs first, then `helm upgrade --wait` to its chart, hooks included. It returns the version upgraded to.
func (c *Cluster) UpgradeKyverno(ctx context.Context) (string, error) {
	if !c.opts.KyvernoPrevious {
		return "", fmt.Errorf("devcluster: UpgradeKyverno needs a cluster started with KyvernoPrevious")
	}
	err := c.kyvernoRelease(ctx, kyvernoModule, "upgrade", func(r *helmrelease.Release, values map[string]any, wait time.Duration) error {
		return r.UpgradeWait(ctx, values, wait)
	})
	if err != nil {
		return "", err
	}
	return kyvernoVersion(c.opts.RepoRoot, kyvernoModule)
}

// kyvernoVersion is the Kyverno release module builds, which is its chart's appVersion and its images' tag.
func kyvernoVersion(repoRoot, module string) (string, error) {
	return binKyverno.inModule(module).version(repoRoot)
}

// kyvernoRelease brings Kyverno's CRDs and images of module's release onto the cluster and the node, then has run
// install or upgrade its chart (what: "install" or "upgrade") with the node's values, waiting for its Pods.
func (c *Cluster) kyvernoRelease(ctx context.Context, module, what string,
	run func(r *helmrelease.Release, values map[string]any, wait time.Duration) error) error {
	modDir, err := kyvernoModuleDir(ctx, c.opts.RepoRoot, module)
	if err != nil {
		return err
	}
	a, err := newApplier(c.internalConfig())
	if err != nil {
		return err
	}
	if err := c.applyKyvernoCRDs(ctx, a, modDir); err != nil {
		return err
	}
	version, err := kyvernoVersion(c.opts.RepoRoot, module)
	if err != nil {
		return err
	}
	begin := time.Now()
	imported := map[string]bool{}
	for _, img := range kyvernoImages {
		ref := img.registry + "/" + img.repository
		if imported[ref] {
			continue
		}
		imported[ref] = true
		if err := c.ImportImage(ctx, c.kyvernoLayouts[module][ref], ref); err != nil {
			return err
		}
	}
	c.progressf("kyverno %s: %d images imported in %s", version, len(imported), time.Since(begin).Round(100*time.Millisecond))

	ch, err := loadChart(filepath.Join(modDir, "charts", "kyverno"))
	if err != nil {
		return err
	}
	release, err := helmrelease.ForChart(c.kubeconfig, ch, "kyverno", KyvernoNamespace)
	if err != nil {
		return err
	}
	values, err := kyvernoNodeValues(c.opts.RepoRoot, version)
	if err != nil {
		return err
	}
	begin = time.Now()
	wait := 5 * time.Minute
	if deadline, ok := ctx.Deadline(); ok {
		wait = time.Until(deadline)
	}
	if err := run(release, values, wait); err != nil {
		return fmt.Errorf("helm %s --wait kyverno %s: %w", what, version, err)
	}
	c.progressf("kyverno %s: helm %s --wait in %s", version, what, time.Since(begin).Round(100*time.Millisecond))
	return c.probeKyvernoPolicy(ctx, a)
}

// kyvernoNodeValues are the values Kyverno's chart is installed with on the node: kyvernoChartValues, two admission
// replicas, and every image of kyvernoImages at version (the module's, which is the chart's appVersion), never pulled.
func kyvernoNodeValues(repoRoot, version string) (map[string]any, error) {
	values, err := kyvernoChartValues(repoRoot)
	if err != nil {
		return nil, err
	}
	values["admissionController"].(map[string]any)["replicas"] = kyvernoAdmissionReplicas
	for _, img := range kyvernoImages {
		setPath(values, img.values, map[string]any{
			"registry": img.registry, "repository": img.repository, "tag": version, "pullPolicy": "Never",
		})
	}
	return values, nil
}

// setPath merges value into values at the dotted path, creating the maps on the way.
func setPath(values map[string]any, dotted string, value map[string]any) {
	m := values
	keys := strings.Split(dotted, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	last := keys[len(keys)-1]
	if old, ok := m[last].(map[string]any); ok {
		for k, v := range value {
			old[k] = v
		}
		return
	}
	m[last] = value
}
