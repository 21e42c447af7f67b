package golden

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

// serviceCacheFile is the file a suite names in globalContextEntries[].resourceFiles for the chart's GlobalContextEntry
// of Services. The CLI only reads such files from the suite's own directory, while the Services are fixtures shared
// by every suite and the preview, so sync-policies writes it: the Services of the suite's
// clusterResources (a cluster whose informer has caught up), in the suite's directory and in its CEL twin's.
const serviceCacheFile = "services-cache.yaml"

// addServiceCaches wants serviceCacheFile in every suite directory under outDir whose kyverno-test.yaml (written or
// wanted) names it.
func (p *syncPlan) addServiceCaches(outDir string) error {
	dirs, err := p.suiteDirs(outDir)
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		content, _, err := p.suiteFile(dir)
		if err != nil {
			return err
		}
		var suite struct {
			ClusterResources     []string `json:"clusterResources"`
			GlobalContextEntries []struct {
				ResourceFiles []string `json:"resourceFiles"`
			} `json:"globalContextEntries"`
		}
		if err := yaml.Unmarshal(content, &suite); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, KyvernoTestFile), err)
		}
		if !namesServiceCache(suite.GlobalContextEntries) {
			continue
		}
		cache, err := servicesOf(dir, suite.ClusterResources)
		if err != nil {
			return err
		}
		header := generatedPrefix + "the Services of " + strings.Join(suite.ClusterResources, ", ") + copySuffix + "\n"
		if err := p.add(filepath.Join(dir, serviceCacheFile), append([]byte(header), cache...)); err != nil {
			return err
		}
	}
	return nil
}

func namesServiceCache(entries []struct {
	ResourceFiles []string `json:"resourceFiles"`
}) bool {
	for _, e := range entries {
		for _, f := range e.ResourceFiles {
			if f == serviceCacheFile {
				return true
			}
		}
	}
	return false
}

// servicesOf returns the Services of files (paths relative to dir; plain manifests or the CLI's ClusterResource
// documents), in order, as one multi-document YAML.
func servicesOf(dir string, files []string) ([]byte, error) {
	var out bytes.Buffer
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		docs, err := render.Split(string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, doc := range docs {
			objects := []any{doc.Object.Object}
			if doc.Object.GetKind() == "ClusterResource" {
				objects, _, _ = unstructured.NestedSlice(doc.Object.Object, "spec", "resources")
			}
			for _, o := range objects {
				obj, ok := o.(map[string]any)
				if !ok || obj["apiVersion"] != "v1" || obj["kind"] != "Service" {
					continue
				}
				text, err := yaml.Marshal(obj)
				if err != nil {
					return nil, err
				}
				out.WriteString("---\n")
				out.Write(text)
			}
		}
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("no Service in %s", strings.Join(files, ", "))
	}
	return out.Bytes(), nil
}
