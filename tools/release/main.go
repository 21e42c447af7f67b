// Command release publishes what `make images` and the charts make of one commit: each controller's multi-arch image
// index, pushed unchanged (same digest as its OCI layout), and each chart as an OCI artifact whose version, appVersion
// and default image follow the release. Releases are immutable: an existing version is refused unless it is a
// pre-release and --overwrite-prerelease is given.
//
//	go run ./tools/release --registry registry.example/team --version 1.2.3 \
//	    --image virtual-ingress-controller=virtual-ingress ...
//
// With --sign-key KEY every pushed image index and chart is signed as `cosign sign --key` signs, so that users
// check them with `cosign verify --key`.
//
// With --oci-layout DIR nothing is pushed: DIR becomes one OCI layout holding every image and chart, each named by
// the reference it would have been pushed to, and `release load --layout DIR` pushes it later (air-gapped sites).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// defaultRegistry is where a release goes unless --registry says otherwise, and so what every chart's values.yaml
// names as its image's registry: the charts in the tree render the images a default release publishes.
const defaultRegistry = "ghcr.io/virtual-ingress"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// pairs is a repeatable flag of binary=chart pairs (the Makefile's IMAGES).
type pairs []imageChart

type imageChart struct{ binary, chart string }

func (p *pairs) String() string { return fmt.Sprint(*p) }

func (p *pairs) Set(v string) error {
	for _, f := range strings.Fields(v) {
		b, c, ok := strings.Cut(f, "=")
		if !ok || b == "" || c == "" {
			return fmt.Errorf("%q: want binary=chart", f)
		}
		*p = append(*p, imageChart{binary: b, chart: c})
	}
	return nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) > 0 && args[0] == "load" {
		return runLoad(ctx, args[1:], out)
	}
	var o options
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.registry, "registry", defaultRegistry, "registry and path to publish under: images as <registry>/<binary>, charts as <registry>/charts/<chart>")
	fs.StringVar(&o.version, "version", "", "the release's semantic version (required): image tag, chart version and appVersion")
	fs.Var(&o.images, "image", "binary=chart: the image _output/images/<binary> and the chart charts/<chart> it runs in (repeatable; space-separated pairs allowed)")
	fs.StringVar(&o.repoRoot, "repo", ".", "repository root (its git state is checked)")
	fs.StringVar(&o.imagesDir, "images-dir", "_output/images", "where `make images` wrote one OCI layout per binary")
	fs.StringVar(&o.chartsDir, "charts-dir", "charts", "chart sources")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the plan and push nothing")
	fs.BoolVar(&o.overwrite, "overwrite-prerelease", false, "replace a pre-release (1.2.3-rc.1) that already exists; a release is never replaced")
	fs.StringVar(&o.layoutOut, "oci-layout", "", "write every image and chart into this OCI layout instead of pushing")
	fs.StringVar(&o.caFile, "ca-file", "", "PEM CA bundle to trust for the registry, in addition to the system's")
	fs.StringVar(&o.signKey, "sign-key", "", "sign every pushed image and chart with this ECDSA P-256 private key (unencrypted PEM), as `cosign sign --key` does")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return release(ctx, o, out)
}

type options struct {
	registry, version                      string
	images                                 pairs
	repoRoot, imagesDir, chartsDir, caFile string
	layoutOut, signKey                     string
	dryRun, overwrite                      bool
}

func (o options) validate() error {
	var errs []error
	if o.version == "" {
		errs = append(errs, errors.New("--version is required"))
	}
	if len(o.images) == 0 {
		errs = append(errs, errors.New("no --image binary=chart given"))
	}
	if o.signKey != "" && o.layoutOut != "" {
		errs = append(errs, errors.New("--sign-key with --oci-layout: a bundle is not signed; sign its manifests after `release load` (cosign sign --key)"))
	}
	if strings.Contains(o.registry, "://") || strings.HasSuffix(o.registry, "/") || o.registry == "" {
		errs = append(errs, fmt.Errorf("--registry %q: want host[:port][/path], no scheme, no trailing slash", o.registry))
	}
	return errors.Join(errs...)
}
