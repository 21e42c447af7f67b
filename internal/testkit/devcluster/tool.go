package devcluster

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// BuildTool builds (or finds cached) package pkg of the pinned module tools/devcluster/binaries/<module> into
// bin/devcluster/<file>-<version of versionModule>, as the control plane's own binaries are, for tests that run
// other real components next to a cluster (CoreDNS, MetalLB's controller, ...). It returns the binary's path.
func BuildTool(ctx context.Context, file, module, versionModule, pkg string, progress io.Writer) (string, error) {
	return buildSpec(ctx, binarySpec{file: file, module: module, versionModule: versionModule, pkg: pkg}, progress)
}

// BuildCoreDNS builds (or finds cached) the CoreDNS that a node runs as cluster DNS and the apps-ingress tests run.
func BuildCoreDNS(ctx context.Context, progress io.Writer) (string, error) {
	return buildSpec(ctx, binCoreDNS, progress)
}

// BuildTraefik builds (or finds cached) Traefik, the ingress and Gateway API controller the virtual-ingress traffic
// tests and bench send requests through. Run it with --global.checkNewVersion=false: the machine has no internet.
func BuildTraefik(ctx context.Context, progress io.Writer) (string, error) {
	return buildSpec(ctx, binTraefik, progress)
}

func buildSpec(ctx context.Context, spec binarySpec, progress io.Writer) (string, error) {
	root, err := repo.Root()
	if err != nil {
		return "", err
	}
	if progress == nil {
		progress = os.Stderr
	}
	paths, err := binaries(ctx, root, filepath.Join(root, "bin", "devcluster"), progress, spec)
	if err != nil {
		return "", err
	}
	return paths[spec.file], nil
}
