package render

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Document is one object of a rendered manifest.
type Document struct {
	// Source is the chart file the document came from, as Helm names it ("<chart>/templates/x.yaml").
	Source string
	Object *unstructured.Unstructured
	// YAML is the document's text as rendered, comments kept, without the "# Source:" line Helm adds and ending
	// in exactly one newline.
	YAML string
}

const sourcePrefix = "# Source: "

// Split cuts a manifest at its "---" lines. Documents holding only comments or whitespace are dropped. A document
// without a "# Source:" line (the second object of a multi-document CRD file) keeps the source of the one before.
func Split(manifest string) ([]Document, error) {
	var docs []Document
	source := ""
	for i, chunk := range splitChunks(manifest) {
		text, src := stripSource(chunk)
		if src != "" {
			source = src
		}
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i, source, err)
		}
		if len(obj) == 0 {
			continue
		}
		docs = append(docs, Document{
			Source: source,
			Object: &unstructured.Unstructured{Object: obj},
			YAML:   text,
		})
	}
	return docs, nil
}

func splitChunks(manifest string) []string {
	var chunks []string
	var cur []string
	for _, line := range strings.Split(manifest, "\n") {
		if strings.TrimRight(line, " \t") == "---" {
			chunks = append(chunks, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return append(chunks, strings.Join(cur, "\n"))
}

// stripSource removes Helm's "# Source:" line and the blank lines around the document.
func stripSource(chunk string) (text, source string) {
	lines := strings.Split(chunk, "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	if len(lines) > 0 && strings.HasPrefix(lines[0], sourcePrefix) {
		source = strings.TrimSpace(strings.TrimPrefix(lines[0], sourcePrefix))
		lines = lines[1:]
	}
	text = strings.Trim(strings.Join(lines, "\n"), "\n")
	if text != "" {
		text += "\n"
	}
	return text, source
}
