package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/registry"
)

// plan is everything one release publishes, checked and packaged before anything is pushed.
type plan struct {
	commit     commit
	version    string
	prerelease bool
	images     []builtImage
	charts     []releasedChart
	registry   string
}

func (p plan) imageRef(binary string) string { return p.registry + "/" + binary + ":" + p.version }
func (p plan) chartRef(chart string) string  { return p.registry + "/charts/" + chart + ":" + p.version }

func (p plan) refs() []string {
	var refs []string
	for _, im := range p.images {
		refs = append(refs, p.imageRef(im.binary))
	}
	for _, c := range p.charts {
		refs = append(refs, p.chartRef(c.name))
	}
	return refs
}

func makePlan(ctx context.Context, o options) (plan, error) {
	if err := o.validate(); err != nil {
		return plan{}, err
	}
	prerelease, err := checkVersion(o.version)
	if err != nil {
		return plan{}, err
	}
	c, err := cleanCommit(ctx, o.repoRoot)
	if err != nil {
		return plan{}, err
	}
	p := plan{commit: c, version: o.version, prerelease: prerelease, registry: o.registry}
	for _, ic := range o.images {
		im, err := loadImage(filepath.Join(o.repoRoot, o.imagesDir), ic.binary, o.version, c.hash)
		if err != nil {
			return plan{}, err
		}
		p.images = append(p.images, im)
		ch, err := packageChart(filepath.Join(o.repoRoot, o.chartsDir), ic.chart, ic.binary, o.registry, o.version, prerelease)
		if err != nil {
			return plan{}, err
		}
		p.charts = append(p.charts, ch)
	}
	return p, nil
}

func release(ctx context.Context, o options, out io.Writer) error {
	p, err := makePlan(ctx, o)
	if err != nil {
		return err
	}
	if o.layoutOut != "" {
		return writeBundle(ctx, p, o.layoutOut, o.dryRun, out)
	}
	var s *signer
	if o.signKey != "" {
		if s, err = loadSigner(o.signKey); err != nil {
			return err
		}
	}
	t, err := newTarget(ctx, o.caFile)
	if err != nil {
		return err
	}
	if err := t.refuseExisting(p.refs(), p.prerelease, o.overwrite); err != nil {
		return err
	}
	if o.dryRun {
		printPlan(out, p, "would push")
		if s != nil {
			fmt.Fprintf(out, "would sign every image and chart with %s\n", o.signKey)
		}
		return nil
	}
	return push(p, t, s, out)
}

// push sends the images first, so that no published chart ever names an image that is not there yet, and signs each
// after its push when s is not nil.
func push(p plan, t *target, s *signer, out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	defer w.Flush()
	for _, im := range p.images {
		start := time.Now()
		ref, err := name.ParseReference(p.imageRef(im.binary), name.StrictValidation)
		if err != nil {
			return err
		}
		if err := remote.WriteIndex(ref, im.index, t.opts...); err != nil {
			return fmt.Errorf("pushing %s: %w", ref, err)
		}
		fmt.Fprintf(w, "pushed image\t%s\t%s\t%s\n", ref, im.digest, time.Since(start).Round(time.Millisecond))
		if err := signed(w, s, t, ref.String(), im.digest); err != nil {
			return err
		}
	}
	for _, c := range p.charts {
		start := time.Now()
		// The creation annotation is the commit's time, not the clock's, so a re-run makes the same manifest.
		res, err := t.helm.Push(c.tgz, p.chartRef(c.name), registry.PushOptCreationTime(p.commit.time.Format(time.RFC3339)))
		if err != nil {
			return fmt.Errorf("pushing chart %s: %w", p.chartRef(c.name), err)
		}
		fmt.Fprintf(w, "pushed chart\t%s\t%s\t%s\n", res.Ref, res.Manifest.Digest, time.Since(start).Round(time.Millisecond))
		digest, err := v1.NewHash(res.Manifest.Digest)
		if err != nil {
			return err
		}
		if err := signed(w, s, t, p.chartRef(c.name), digest); err != nil {
			return err
		}
	}
	return nil
}

// signed signs ref's manifest (digest) when s is not nil and says so on w.
func signed(w io.Writer, s *signer, t *target, ref string, digest v1.Hash) error {
	if s == nil {
		return nil
	}
	start := time.Now()
	sig, err := s.sign(t, ref, digest)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "signed\t%s\t%s\t%s\n", sig, digest, time.Since(start).Round(time.Millisecond))
	return nil
}

func printPlan(out io.Writer, p plan, verb string) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	defer w.Flush()
	fmt.Fprintf(w, "release %s of commit %s (%s)\n", p.version, p.commit.hash, map[bool]string{true: "pre-release", false: "release"}[p.prerelease])
	for _, im := range p.images {
		fmt.Fprintf(w, "%s image\t%s\t%s\n", verb, p.imageRef(im.binary), im.digest)
	}
	for _, c := range p.charts {
		fmt.Fprintf(w, "%s chart\t%s\tpackage sha256:%x, default image %s:%s\n", verb, p.chartRef(c.name), sha256.Sum256(c.tgz), c.image, c.version)
	}
}
