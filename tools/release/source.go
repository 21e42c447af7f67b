package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// refName is the OCI annotation naming a manifest in a layout's index.json.
const refName = "org.opencontainers.image.ref.name"

// commit is what the tree was when the release was made.
type commit struct {
	hash string
	time time.Time
}

// cleanCommit refuses a tree with changes git would show (tracked or untracked, not ignored): a release is exactly
// a commit, so that whoever has the version can rebuild it.
func cleanCommit(ctx context.Context, root string) (commit, error) {
	status, err := git(ctx, root, "status", "--porcelain", "--untracked-files=normal")
	if err != nil {
		return commit{}, err
	}
	if status != "" {
		return commit{}, fmt.Errorf("the tree at %s has uncommitted changes; commit or stash them first:\n%s", root, status)
	}
	out, err := git(ctx, root, "log", "-1", "--format=%H %ct")
	if err != nil {
		return commit{}, err
	}
	hash, secs, _ := strings.Cut(out, " ")
	var unix int64
	if _, err := fmt.Sscan(secs, &unix); err != nil {
		return commit{}, fmt.Errorf("commit time %q: %w", secs, err)
	}
	return commit{hash: hash, time: time.Unix(unix, 0).UTC()}, nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// checkVersion accepts what Helm accepts as a chart version and an OCI registry as a tag: strict SemVer 2 without
// build metadata (a "+" is not allowed in a tag, and Helm's "_" workaround is not worth carrying).
func checkVersion(v string) (prerelease bool, err error) {
	sv, err := semver.StrictNewVersion(v)
	if err != nil {
		return false, fmt.Errorf("version %q is not a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE]): %w", v, err)
	}
	if sv.Metadata() != "" {
		return false, fmt.Errorf("version %q: build metadata (+...) cannot be an image tag", v)
	}
	return sv.Prerelease() != "", nil
}

// builtImage is one binary's image index as `make images` wrote it.
type builtImage struct {
	binary string
	index  v1.ImageIndex
	digest v1.Hash
}

// loadImage opens the layout of binary and checks it was built for this release: the version it was named with, and
// the commit its images are labelled with, so that a layout left over from another build is never published.
func loadImage(dir, binary, version, revision string) (builtImage, error) {
	path := filepath.Join(dir, binary)
	top, err := layout.ImageIndexFromPath(path)
	if err != nil {
		return builtImage{}, fmt.Errorf("%s: %w (run `make images VERSION=%s`)", path, err, version)
	}
	im, err := top.IndexManifest()
	if err != nil {
		return builtImage{}, err
	}
	if len(im.Manifests) != 1 {
		return builtImage{}, fmt.Errorf("%s holds %d manifests, want the one image index `make images` writes", path, len(im.Manifests))
	}
	d := im.Manifests[0]
	if got := d.Annotations[refName]; got != version {
		return builtImage{}, fmt.Errorf("%s was built as version %q, not %s (run `make images VERSION=%s`)", path, got, version, version)
	}
	idx, err := top.ImageIndex(d.Digest)
	if err != nil {
		return builtImage{}, err
	}
	if err := checkRevision(idx, revision); err != nil {
		return builtImage{}, fmt.Errorf("%s: %w (run `make images VERSION=%s`)", path, err, version)
	}
	return builtImage{binary: binary, index: idx, digest: d.Digest}, nil
}

// checkRevision requires every platform's image to carry revision as its org.opencontainers.image.revision label.
func checkRevision(idx v1.ImageIndex, revision string) error {
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, m := range im.Manifests {
		img, err := idx.Image(m.Digest)
		if err != nil {
			return err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return err
		}
		if got := cf.Config.Labels["org.opencontainers.image.revision"]; got != revision {
			return fmt.Errorf("image %s was built from commit %q, the tree is at %s", m.Digest, got, revision)
		}
	}
	return nil
}
