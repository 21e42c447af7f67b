package nodetier

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"helm.sh/helm/v3/pkg/chart"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/registry"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// The node tier installs every chart as users get it: published by the release tool (what `make release` runs) to a
// registry that only the node's containerd trusts, installed by `helm install oci://` with images the node pulls, and
// upgraded from the previous release to the current one. Both releases are of the tree under test (no earlier
// release of it exists to pull), as two versions.
const (
	PreviousVersion = "0.1.0-node.1"
	CurrentVersion  = "0.1.0-node.2"
)

// registryPath is the path under the registry's host the releases are published to, as a team's registry would be.
const registryPath = "virtual-ingress"

// releases is the registry the node tier published to.
type releases struct {
	reg *registry.Registry
	// publicKey verifies the releases' signatures; cosign is the pinned cosign that does (bin/cosign).
	publicKey, cosign string
	// base is host:port/path: images are base/<binary>:<version>, charts oci://base/charts/<chart>.
	base string
	// helmDir keeps Helm's registry configuration out of the user's home.
	helmDir string
}

func (r *releases) chartRef(chart string) string { return "oci://" + r.base + "/charts/" + chart }

// publish starts a registry over TLS on the host's end of the node's link, makes the node's containerd trust its CA
// (and nothing else trust it), and publishes the two releases with the release tool, signed with a key of its own.
func (e *Env) publish(ctx context.Context) (*releases, error) {
	dir := filepath.Join(e.Cluster.Dir(), "release")
	if err := os.MkdirAll(filepath.Join(dir, "registry"), 0o755); err != nil {
		return nil, err
	}
	reg, err := registry.Start(ctx, registry.Options{Dir: filepath.Join(dir, "registry"), IP: net.ParseIP(devcluster.HostIP)})
	if err != nil {
		return nil, err
	}
	e.stops = append(e.stops, reg.Stop)
	if err := e.Cluster.TrustRegistry(reg.Host, reg.HostsTOML()); err != nil {
		return nil, err
	}
	images, err := repo.Images(e.RepoRoot)
	if err != nil {
		return nil, err
	}
	cosign := filepath.Join(e.RepoRoot, "bin", "cosign")
	if _, err := os.Stat(cosign); err != nil {
		return nil, fmt.Errorf("%w: run `make bin/cosign` (make e2e-node does)", err)
	}
	privateKey, publicKey, err := registry.WriteKeyPair(dir, "release")
	if err != nil {
		return nil, err
	}
	r := &releases{reg: reg, base: reg.Host + "/" + registryPath, helmDir: filepath.Join(dir, "helm"),
		publicKey: publicKey, cosign: cosign}
	for _, version := range []string{PreviousVersion, CurrentVersion} {
		tree := filepath.Join(dir, version)
		if err := stageTree(ctx, e.RepoRoot, tree, version, images); err != nil {
			return nil, fmt.Errorf("staging release %s: %w", version, err)
		}
		begin := time.Now()
		cmd := exec.CommandContext(ctx, "go", "run", "./tools/release", "--repo", tree,
			"--registry", r.base, "--version", version, "--image", images, "--ca-file", reg.CAFile, "--sign-key", privateKey)
		cmd.Dir = e.RepoRoot
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("release %s: %w\n%s\nregistry log:\n%s", version, err, out, reg.Logs())
		}
		fmt.Printf("release %s to %s (go run ./tools/release, build included) in %s:\n%s", version, r.base,
			time.Since(begin).Round(10*time.Millisecond), out)
	}
	return r, nil
}

// stageTree makes dir what `make images VERSION=version` leaves on a clean commit of this tree: a git repository
// holding the charts, and under _output/images each binary's layout for the node's platform, named version and
// labelled with that commit. The images are those `make images` built, relabelled, not rebuilt: their builds are
// reproducible, so a rebuild would differ only in the labels.
func stageTree(ctx context.Context, root, dir, version, images string) error {
	revision, err := repo.CommitCharts(ctx, root, dir, "release "+version)
	if err != nil {
		return err
	}
	for _, pair := range strings.Fields(images) {
		binary, _, _ := strings.Cut(pair, "=")
		in := filepath.Join(root, "_output", "images", binary)
		if err := relabel(in, filepath.Join(dir, "_output", "images", binary), version, revision); err != nil {
			return fmt.Errorf("%s (run `make images`): %w", in, err)
		}
	}
	return nil
}

// relabel writes to out the node's platform of the image index in the layout in, with the version and revision
// labels and the layout's ref name tools/images gives them.
func relabel(in, out, version, revision string) error {
	top, err := layout.ImageIndexFromPath(in)
	if err != nil {
		return err
	}
	im, err := top.IndexManifest()
	if err != nil {
		return err
	}
	if len(im.Manifests) != 1 {
		return fmt.Errorf("%d manifests, want the one index `make images` writes", len(im.Manifests))
	}
	idx, err := top.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		return err
	}
	platforms, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	staged := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, m := range platforms.Manifests {
		if m.Platform == nil || m.Platform.OS != "linux" || m.Platform.Architecture != runtime.GOARCH {
			continue
		}
		img, err := idx.Image(m.Digest)
		if err != nil {
			return err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return err
		}
		cf = cf.DeepCopy()
		cf.Config.Labels["org.opencontainers.image.version"] = version
		cf.Config.Labels["org.opencontainers.image.revision"] = revision
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return err
		}
		staged = mutate.AppendManifests(staged, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: m.Platform}})
	}
	m, err := staged.IndexManifest()
	if err != nil {
		return err
	}
	if len(m.Manifests) == 0 {
		return fmt.Errorf("no linux/%s image", runtime.GOARCH)
	}
	l, err := layout.Write(out, empty.Index)
	if err != nil {
		return err
	}
	return l.AppendIndex(staged, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": version}))
}

// releases publishes both releases on the first call of the test binary and returns where.
func (e *Env) releases(t *testing.T) *releases {
	t.Helper()
	e.published.Do(func() { e.rel, e.publishErr = e.publish(context.Background()) })
	if e.publishErr != nil {
		t.Fatal(e.publishErr)
	}
	return e.rel
}

// pullChart is `cosign verify --key` of the chart and of the image its values name, then `helm pull
// oci://<registry>/charts/<chart> --version <version> --ca-file <the registry's CA>`: what a user installing a signed
// release does.
func (e *Env) pullChart(t *testing.T, name, version string) *chart.Chart {
	t.Helper()
	r := e.releases(t)
	chartRef := strings.TrimPrefix(r.chartRef(name), "oci://") + ":" + version
	r.verify(t, chartRef)
	ch, err := helmrelease.PullOCI(r.chartRef(name), version, r.reg.CAFile, r.helmDir)
	if err != nil {
		t.Fatal(err)
	}
	image, err := chartImage(ch)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(image, r.base+"/") {
		t.Fatalf("chart %s %s names image %s, not one of the release's (%s/...)", name, version, image, r.base)
	}
	r.verify(t, image)
	return ch
}

// verify fails the test unless cosign verifies ref's signature with the releases' public key.
func (r *releases) verify(t *testing.T, ref string) {
	t.Helper()
	begin := time.Now()
	if out, err := r.reg.Verify(context.Background(), r.cosign, filepath.Join(r.helmDir, "cosign"), r.publicKey, ref); err != nil {
		t.Fatalf("cosign verify --key %s %s: %v\n%s", r.publicKey, ref, err, out)
	}
	t.Logf("cosign verify --key <the release key> %s: verified in %s", ref, time.Since(begin).Round(10*time.Millisecond))
}

// chartImage is the controller image a released chart's default values name (image or controller.image): its
// repository and its tag, which defaults to the chart's appVersion.
func chartImage(ch *chart.Chart) (string, error) {
	for _, path := range [][]string{{"image"}, {"controller", "image"}} {
		v := ch.Values
		for _, key := range path {
			v, _ = v[key].(map[string]any)
		}
		repository, _ := v["repository"].(string)
		if repository == "" {
			continue
		}
		tag, _ := v["tag"].(string)
		if tag == "" {
			tag = ch.Metadata.AppVersion
		}
		return repository + ":" + tag, nil
	}
	return "", fmt.Errorf("chart %s: no image.repository or controller.image.repository in its values", ch.Name())
}

// pulledRE is the kubelet's event for an image it pulled.
var pulledRE = regexp.MustCompile(`^Successfully pulled image "([^"]+)" in (\S+)`)

// pulledImages waits until no Pod of the namespace is terminating, every container that runs an image of the registry
// runs version's, and the kubelet's Pulled event of each is there; it returns the pull times for the log.
func (e *Env) pulledImages(t *testing.T, namespace, version string) string {
	t.Helper()
	ctx := context.Background()
	prefix := e.rel.base + "/"
	var pulls []string
	seen := map[string]bool{}
	poll.Until(t, 2*time.Minute, "the release's Pods on its images, pulled by the kubelet", func() (bool, string, error) {
		pods, err := e.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		want := map[string]bool{}
		for _, p := range pods.Items {
			// The Pods an upgrade replaced are waited for until they are gone: the checks that follow read every Pod.
			if p.DeletionTimestamp != nil {
				return false, "Pod " + p.Name + " is terminating", nil
			}
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			for _, cs := range p.Status.ContainerStatuses {
				if !strings.HasPrefix(cs.Image, prefix) {
					continue
				}
				if !strings.HasSuffix(cs.Image, ":"+version) {
					return false, fmt.Sprintf("Pod %s still runs %s", p.Name, cs.Image), nil
				}
				want[cs.Image] = true
			}
		}
		if len(want) == 0 {
			return false, "no running Pod runs an image of " + prefix, nil
		}
		events, err := e.Kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=Pulled"})
		if err != nil {
			return false, "", err
		}
		for _, ev := range events.Items {
			if m := pulledRE.FindStringSubmatch(ev.Message); m != nil && want[m[1]] && !seen[m[1]] {
				seen[m[1]] = true
				pulls = append(pulls, strings.TrimPrefix(m[1], prefix)+" pulled by the node in "+m[2])
			}
		}
		for image := range want {
			if !seen[image] {
				return false, "no Pulled event for " + image, nil
			}
		}
		return true, "", nil
	})
	slices.Sort(pulls)
	return strings.Join(pulls, ", ")
}
