package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"os"
	"text/tabwriter"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/registry"
)

// writeBundle writes the release into one OCI layout at dir, each manifest named (org.opencontainers.image.ref.name)
// by the full reference it is published under, so `release load` (or skopeo, for the images) can push it as is.
func writeBundle(ctx context.Context, p plan, dir string, dryRun bool, out io.Writer) error {
	if dryRun {
		printPlan(out, p, "would write")
		return nil
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s exists and is not empty; give a new directory", dir)
	}
	l, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	defer w.Flush()
	for _, im := range p.images {
		ref := p.imageRef(im.binary)
		if err := l.AppendIndex(im.index, layout.WithAnnotations(map[string]string{refName: ref})); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote image\t%s\t%s\n", ref, im.digest)
	}
	return helmArtifacts(ctx, p, func(c releasedChart, artifact v1.Image) error {
		ref := p.chartRef(c.name)
		if err := l.AppendImage(artifact, layout.WithAnnotations(map[string]string{refName: ref})); err != nil {
			return err
		}
		d, err := artifact.Digest()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote chart\t%s\t%s\n", ref, d)
		return nil
	})
}

// helmArtifacts calls each with every chart as the OCI artifact Helm's registry client makes of it. The client only pushes
// to a registry, so it pushes to a registry in this process on loopback and the artifact is read back from there:
// the layout then holds exactly what a direct push would have published.
func helmArtifacts(ctx context.Context, p plan, each func(releasedChart, v1.Image) error) error {
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		return err
	}
	helm, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptWriter(io.Discard))
	if err != nil {
		return err
	}
	for _, c := range p.charts {
		staged := u.Host + "/charts/" + c.name + ":" + c.version
		if _, err := helm.Push(c.tgz, staged, registry.PushOptCreationTime(p.commit.time.Format(time.RFC3339))); err != nil {
			return fmt.Errorf("packing chart %s: %w", c.name, err)
		}
		ref, err := name.ParseReference(staged, name.Insecure)
		if err != nil {
			return err
		}
		img, err := remote.Image(ref, remote.WithContext(ctx))
		if err != nil {
			return err
		}
		if err := each(c, img); err != nil {
			return fmt.Errorf("chart %s: %w", c.name, err)
		}
	}
	return nil
}

// runLoad pushes a layout that `release --oci-layout` wrote to the references it names, with the same immutability
// rule as a release.
func runLoad(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("release load", flag.ContinueOnError)
	fs.SetOutput(out)
	dir := fs.String("layout", "", "OCI layout written by `release --oci-layout` (required)")
	caFile := fs.String("ca-file", "", "PEM CA bundle to trust for the registry, in addition to the system's")
	overwrite := fs.Bool("overwrite-prerelease", false, "replace a pre-release that already exists; a release is never replaced")
	dryRun := fs.Bool("dry-run", false, "print what would be pushed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("load: --layout is required")
	}
	top, err := layout.ImageIndexFromPath(*dir)
	if err != nil {
		return err
	}
	im, err := top.IndexManifest()
	if err != nil {
		return err
	}
	var refs []string
	prerelease := false
	for _, d := range im.Manifests {
		ref := d.Annotations[refName]
		r, err := name.NewTag(ref, name.StrictValidation)
		if err != nil {
			return fmt.Errorf("manifest %s is named %q, not a full reference: was the layout written by `release --oci-layout`? %w", d.Digest, ref, err)
		}
		pre, err := checkVersion(r.TagStr())
		if err != nil {
			return err
		}
		prerelease = prerelease || pre
		refs = append(refs, ref)
	}
	t, err := newTarget(ctx, *caFile)
	if err != nil {
		return err
	}
	if err := t.refuseExisting(refs, prerelease, *overwrite); err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	defer w.Flush()
	for i, d := range im.Manifests {
		if *dryRun {
			fmt.Fprintf(w, "would push\t%s\t%s\n", refs[i], d.Digest)
			continue
		}
		if err := pushDescriptor(top, d, refs[i], t.opts); err != nil {
			return err
		}
		fmt.Fprintf(w, "pushed\t%s\t%s\n", refs[i], d.Digest)
	}
	return nil
}

func pushDescriptor(top v1.ImageIndex, d v1.Descriptor, ref string, opts []remote.Option) error {
	r, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return err
	}
	if d.MediaType.IsIndex() {
		idx, err := top.ImageIndex(d.Digest)
		if err != nil {
			return err
		}
		return remote.WriteIndex(r, idx, opts...)
	}
	img, err := top.Image(d.Digest)
	if err != nil {
		return err
	}
	if err := remote.Write(r, img, opts...); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	return nil
}
