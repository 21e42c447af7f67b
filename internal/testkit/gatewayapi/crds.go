package gatewayapi

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// standardDir is where the module keeps the standard channel's manifests.
const standardDir = "config/crd/standard/"

// HTTPRouteCRD is the name of the HTTPRoute CRD of the standard channel.
const HTTPRouteCRD = "httproutes.gateway.networking.k8s.io"

// StandardCRDs reads every CustomResourceDefinition of Gateway API's standard channel at Version, sorted by name.
// The module zip is cached under repoRoot/bin/modules.
func StandardCRDs(ctx context.Context, repoRoot string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	zipPath, err := fetchZip(ctx, filepath.Join(repoRoot, "bin", "modules"), Module, Version, ZipHash)
	if err != nil {
		return nil, err
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	prefix := Module + "@" + Version + "/" + standardDir
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range zr.File {
		name, ok := strings.CutPrefix(f.Name, prefix)
		if !ok || strings.Contains(name, "/") || path.Ext(name) != ".yaml" {
			continue
		}
		crd, err := readCRD(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if crd != nil {
			crds = append(crds, crd)
		}
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("%s@%s: no CRDs under %s", Module, Version, standardDir)
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	return crds, nil
}

// Find returns the CRD called name from crds.
func Find(crds []*apiextensionsv1.CustomResourceDefinition, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	for _, c := range crds {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%s@%s has no CRD %s in its standard channel", Module, Version, name)
}

// readCRD decodes f, or returns nil when it holds something else (the channel also ships a
// ValidatingAdmissionPolicy that guards upgrades).
func readCRD(f *zip.File) (*apiextensionsv1.CustomResourceDefinition, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	var meta struct{ Kind string }
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return nil, err
	}
	if meta.Kind != "CustomResourceDefinition" {
		return nil, nil
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return nil, err
	}
	return &crd, nil
}
