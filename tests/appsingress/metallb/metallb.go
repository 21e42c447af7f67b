// Package metallb runs MetalLB's real controller (the part that assigns LoadBalancer IPs; the speaker, which
// announces them, is not needed on loopback) out of cluster against a devcluster, built from the pinned module in
// tools/devcluster/binaries/metallb. Its CRDs come from the same module version.
//
// The module pins MetalLB v0.15.2: v0.16.2's controller imports github.com/metallb/frr-k8s v0.0.27, which the Go
// module proxy does not serve, so v0.16.2 cannot be built here (with the served frr-k8s v0.0.20 in its place it does
// not compile: that API lacks AsPathPrependPrefixes).
package metallb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

const module = "go.universe.tf/metallb"

// Build returns the path of MetalLB's controller binary, building it on first use.
func Build(ctx context.Context) (string, error) {
	return devcluster.BuildTool(ctx, "metallb-controller", "metallb", module, module+"/controller", nil)
}

// InstallCRDs creates MetalLB's CRDs (config/crd/bases of the pinned module) in the cluster behind cfg.
func InstallCRDs(ctx context.Context, cfg *rest.Config) error {
	dir, err := moduleDir(ctx)
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dir, "config", "crd", "bases", "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no MetalLB CRDs under %s", dir)
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := dec.Decode(crd); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return fmt.Errorf("%s: %w", f, err)
			}
			if crd.Name == "" {
				continue
			}
			if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
			}
		}
	}
	return nil
}

// Start runs the controller with the cluster's kubeconfig, watching pools in namespace, its webhook off.
func Start(ctx context.Context, dir, kubeconfig, namespace string) (*localproc.Process, error) {
	bin, err := Build(ctx)
	if err != nil {
		return nil, err
	}
	port, err := localproc.FreePort()
	if err != nil {
		return nil, err
	}
	return localproc.Start("metallb-controller", filepath.Join(dir, "metallb-controller.log"),
		[]string{"KUBECONFIG=" + kubeconfig},
		bin, "--namespace", namespace, "--webhook-mode", "disabled", "--port", strconv.Itoa(port), "--log-level", "info")
}

// moduleDir is the pinned MetalLB module's directory in the module cache.
func moduleDir(ctx context.Context) (string, error) {
	root, err := repo.Root()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = filepath.Join(root, "tools", "devcluster", "binaries", "metallb")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating %s: %w", module, err)
	}
	return strings.TrimSpace(string(out)), nil
}
