package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// TestCommittedCRDIsGenerated fails when the chart's VirtualHTTPRoute CRD is not what crdgen writes, e.g. after the
// skeleton, the VirtualIngress CRD or the Gateway API pin changed without `make generate`.
func TestCommittedCRDIsGenerated(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, outputPath))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run make generate", outputPath)
	}
}
