// Command crdgen writes the VirtualHTTPRoute CRD of the virtual-ingress chart (make generate): Gateway API's
// HTTPRoute schema from the pinned sigs.k8s.io/gateway-api module, so routes are validated exactly as HTTPRoutes
// are, with backendRefs that may select their Service by labels, and the status a VirtualIngress has. Its test fails
// when the committed CRD is stale.
package main

//go:generate go run .

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// Repository-relative paths of the CRD crdgen writes and the one it reuses parts of.
const (
	outputPath         = "charts/virtual-ingress/files/crds/virtualhttproutes.virtual-ingress.io.yaml"
	virtualIngressPath = "charts/virtual-ingress/files/crds/virtual-ingress.io_virtualingresses.yaml"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "crdgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	data, err := generate(ctx, root)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, outputPath), data, 0o644)
}
