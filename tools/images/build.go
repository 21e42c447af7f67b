package main

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// nonRoot is the distroless "nonroot" user; the chart's securityContext uses the same ids.
const nonRoot = "65532"

type options struct {
	pkg, name, out            string
	binary                    string
	platforms                 []string
	version, revision, source string
	created                   int64
}

type platformImage struct {
	platform string
	digest   v1.Hash
	size     int64
}

type result struct {
	index  v1.Hash
	images []platformImage
}

func build(ctx context.Context, o options) (*result, error) {
	created := time.Unix(o.created, 0).UTC()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	res := &result{}
	if o.binary != "" && len(o.platforms) != 1 {
		return nil, fmt.Errorf("--binary packs one binary: give its one platform, not %q", o.platforms)
	}
	for _, p := range o.platforms {
		osName, arch, ok := strings.Cut(p, "/")
		if !ok || osName == "" || arch == "" {
			return nil, fmt.Errorf("platform %q: want os/arch", p)
		}
		bin, err := binaryFor(ctx, o, osName, arch)
		if err != nil {
			return nil, err
		}
		img, err := platformImageOf(o, bin, osName, arch, created)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		digest, err := img.Digest()
		if err != nil {
			return nil, err
		}
		res.images = append(res.images, platformImage{platform: p, digest: digest, size: int64(len(bin))})
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: osName, Architecture: arch}},
		})
	}
	var err error
	if res.index, err = idx.Digest(); err != nil {
		return nil, err
	}
	// A layout holds whatever was appended to it; start from scratch so it holds exactly this build.
	if err := os.RemoveAll(o.out); err != nil {
		return nil, err
	}
	l, err := layout.Write(o.out, empty.Index)
	if err != nil {
		return nil, err
	}
	return res, l.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": o.version}))
}

// binaryFor is the prebuilt binary o names, or else o's package built for osName/arch.
func binaryFor(ctx context.Context, o options, osName, arch string) ([]byte, error) {
	if o.binary != "" {
		return os.ReadFile(o.binary)
	}
	return goBuild(ctx, o.pkg, osName, arch)
}

// goBuild cross-compiles pkg statically; -trimpath and no cgo make the binary independent of the build machine.
func goBuild(ctx context.Context, pkg, osName, arch string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "images-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "bin")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+osName, "GOARCH="+arch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build %s for %s/%s: %w", pkg, osName, arch, err)
	}
	return os.ReadFile(out)
}

func platformImageOf(o options, bin []byte, osName, arch string, created time.Time) (v1.Image, error) {
	entrypoint := "/usr/local/bin/" + o.name
	layerTar, err := rootfs(entrypoint, bin, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: created}, CreatedBy: createdBy(o)},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = osName, arch
	cf.Created = v1.Time{Time: created}
	cf.Config.Entrypoint = []string{entrypoint}
	cf.Config.User = nonRoot + ":" + nonRoot
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":    o.name,
		"org.opencontainers.image.version":  o.version,
		"org.opencontainers.image.source":   o.source,
		"org.opencontainers.image.revision": o.revision,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.created":  created.Format(time.RFC3339),
	}
	return mutate.ConfigFile(img, cf)
}

func createdBy(o options) string {
	if o.binary != "" {
		return "tools/images: " + filepath.Base(o.binary)
	}
	return "tools/images: go build " + o.pkg
}

// rootfs is the image's only layer: the binary (root-owned, so the non-root process cannot replace it) and the
// passwd/group entries of the non-root user, so tools that look the user up find it.
func rootfs(entrypoint string, bin []byte, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := []string{"etc/", "tmp/", "usr/", "usr/local/", "usr/local/bin/"}
	for _, d := range dirs {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: created}); err != nil {
			return nil, err
		}
	}
	files := []struct {
		name string
		mode int64
		data []byte
	}{
		{"etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:" + nonRoot + ":" + nonRoot + ":nonroot:/home/nonroot:/sbin/nologin\n")},
		{"etc/group", 0o644, []byte("root:x:0:\nnonroot:x:" + nonRoot + ":\n")},
		{strings.TrimPrefix(entrypoint, "/"), 0o755, bin},
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: created}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
