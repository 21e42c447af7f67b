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
	root, err := repo.Root()
	if err != nil {
		return "", err
	}
	if progress == nil {
		progress = os.Stderr
	}
	spec := binarySpec{file: file, module: module, versionModule: versionModule, pkg: pkg}
	paths, err := binaries(ctx, root, filepath.Join(root, "bin", "devcluster"), progress, spec)
	if err != nil {
		return "", err
	}
	return paths[file], nil
}
