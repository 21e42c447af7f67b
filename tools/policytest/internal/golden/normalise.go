package golden

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

// A render is normalised before it meets its golden file, so that golden files hold only what no other file of the
// repository holds already:
//
//   - A CRD of the chart's crds/ directory becomes one comment line naming it. Helm installs those files as they
//     are (they are no templates), so their copy in a golden file only repeated a source file. Their content is
//     therefore not checked here (the crdschema tests and the e2e suites exercise it); whether the render holds
//     them is, since the line is in the golden file.
//   - A CRD a template renders from a file of the chart (the virtual-ingress chart's templates/crds.yaml, from
//     files/crds/) shows its metadata, and instead of its spec one comment line naming that file, when the spec is
//     that file's: the file is generated and checked by make lint, and the labels and annotations the template adds
//     are what a values case can change.
//   - A document identical to a file sync-policies generated (that file minus its header line: the same
//     normalisation sync applies) becomes one comment line naming that file. Only the committed file is looked at,
//     not what sync would write now: after a change to a policy template the committed file is stale, the document
//     no longer matches and shows in full, and the golden file fails along with sync's own check.

// normalDoc is one document of a render.
type normalDoc struct {
	source string // Helm's "# Source:" path: <chart>/templates/... or <chart>/crds/...
	text   string // as rendered, "# Source:" line included, ending in one newline
	ref    string // the comment line standing for it, or "" if it has none
	crd    bool   // a CRD is never shown in full
	id     string // kind and name, when the document is one object
	gone   bool   // in a base render, absent from the case's: ref says so, and the text is not repeated
}

type normalRender []normalDoc

// normalise splits a manifest at its "---" lines, as render.Split does, and gives each document its reference line
// where it has one. generated maps the body of every generated file to its path, crdFiles the CRDs of the chart's
// files by name.
func normalise(manifest string, generated map[string]string, crdFiles map[string]crdFile) (normalRender, error) {
	var docs normalRender
	source := ""
	for _, chunk := range strings.SplitAfter("\n"+manifest, "\n---\n") {
		chunk = strings.TrimSuffix(chunk, "---\n")
		if strings.TrimSpace(chunk) == "" {
			continue
		}
		text := strings.Trim(chunk, "\n") + "\n"
		hasSource := false
		if first, _, _ := strings.Cut(text, "\n"); strings.HasPrefix(first, "# Source: ") {
			source, hasSource = strings.TrimPrefix(first, "# Source: "), true
		}
		if !hasSource && len(docs) > 0 && docs[len(docs)-1].crd {
			continue // the next object of a multi-document CRD file: its reference stands for the whole file
		}
		doc := normalDoc{source: source, text: text}
		if isCRDSource(source) {
			doc.crd = true
			doc.ref = "# Source: " + source + " (CRD file, installed as it is: not repeated here)\n"
			docs = append(docs, doc)
			continue
		}
		split, err := render.Split(chunk)
		if err != nil {
			return nil, err
		}
		if len(split) == 1 {
			doc.id = split[0].Object.GetKind() + " " + split[0].Object.GetName()
			if path, ok := generated[split[0].YAML]; ok {
				doc.ref = "# Source: " + source + " (rendered as " + path + ")\n"
			}
			if ref, ok := crdFromFile(source, split[0], crdFiles); ok {
				doc.ref, doc.crd = ref, true
			}
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

// isCRDSource tells a file of a crds/ directory from a template: Helm names the first <chart>/crds/<file>, or
// <chart>/charts/<subchart>/crds/<file> for a subchart's, and templates <chart>/templates/<file>.
func isCRDSource(source string) bool {
	parts := strings.Split(source, "/")
	i := 1
	for i+1 < len(parts) && parts[i] == "charts" {
		i += 2
	}
	return i+1 < len(parts) && parts[i] == "crds"
}

// text prints the render. Documents of the templates in full are printed whole even where they have a reference
// line; CRDs never are.
func (r normalRender) text(full map[string]bool) string {
	var b strings.Builder
	for _, d := range r {
		b.WriteString("---\n")
		if d.ref != "" && (d.crd || d.gone || !full[d.source]) {
			b.WriteString(d.ref)
		} else {
			b.WriteString(d.text)
		}
	}
	return b.String()
}

// without marks the objects of r that other does not render (same template, kind and name): a diff from r to other
// then shows each as one removed line naming it, since the base's golden file holds its text already.
func (r normalRender) without(other normalRender) normalRender {
	rendered := map[string]bool{}
	for _, d := range other {
		rendered[d.source+"\x00"+d.id] = true
	}
	out := slices.Clone(r)
	for i, d := range out {
		if d.id != "" && !d.crd && !rendered[d.source+"\x00"+d.id] {
			out[i].gone = true
			out[i].ref = "# Source: " + d.source + " (" + d.id + ": not rendered)\n"
		}
	}
	return out
}

// shownInFull lists the templates that have at least one document without a reference line.
func (r normalRender) shownInFull(into map[string]bool) map[string]bool {
	for _, d := range r {
		if d.ref == "" {
			into[d.source] = true
		}
	}
	return into
}

// generatedBodies maps the body of every file sync-policies generated under dir (the file without its header
// line) to its path. Where several have the same body, the one nearest to dir names it.
func generatedBodies(dir string) (map[string]string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		paths = append(paths, path)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	sort.SliceStable(paths, func(i, j int) bool {
		return strings.Count(paths[i], string(filepath.Separator)) < strings.Count(paths[j], string(filepath.Separator))
	})
	bodies := map[string]string{}
	for _, path := range paths {
		content, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if !isGenerated(content) {
			continue
		}
		_, body, _ := strings.Cut(string(content), "\n")
		if _, taken := bodies[body]; !taken {
			bodies[body] = filepath.ToSlash(path)
		}
	}
	return bodies, nil
}

// crdFile is a CRD kept as a file of a chart, which a template renders.
type crdFile struct {
	path string // relative to the chart
	spec any
}

// chartCRDFiles reads the CRDs under the chart's files/ directory, by name.
func chartCRDFiles(chartDir string) (map[string]crdFile, error) {
	paths, err := filepath.Glob(filepath.Join(chartDir, "files", "crds", "*.yaml"))
	if err != nil {
		return nil, err
	}
	crds := map[string]crdFile{}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		docs, err := render.Split(string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		rel, err := filepath.Rel(chartDir, path)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if d.Object.GetKind() == "CustomResourceDefinition" {
				crds[d.Object.GetName()] = crdFile{path: filepath.ToSlash(rel), spec: d.Object.Object["spec"]}
			}
		}
	}
	return crds, nil
}

// crdFromFile is the reference of a template's CRD whose spec is that of a CRD file of the chart: its metadata as
// rendered, and a comment for the spec.
func crdFromFile(source string, doc render.Document, crds map[string]crdFile) (string, bool) {
	file, ok := crds[doc.Object.GetName()]
	if !ok || doc.Object.GetKind() != "CustomResourceDefinition" || !reflect.DeepEqual(doc.Object.Object["spec"], file.spec) {
		return "", false
	}
	head, _, found := strings.Cut(doc.YAML, "\nspec:\n")
	if !found {
		return "", false
	}
	return "# Source: " + source + "\n" + head + "\nspec: # as in " + file.path + ", not repeated here\n", true
}

// documentHeading names the document of a normalised render that line at belongs to, for a diff's hunk line: its
// kind and metadata.name where they stand above the line, then its template. Only the lines from the document's
// "# Source:" line down to at are looked at, so a name or kind below the changed line is not named.
func documentHeading(lines []string, at int) string {
	var kind, name string
	for i := min(at, len(lines)-1); i >= 0; i-- {
		line := strings.TrimSuffix(lines[i], "\n")
		if source, ok := strings.CutPrefix(line, "# Source: "); ok {
			source, _, _ = strings.Cut(source, " (")
			return strings.Join(strings.Fields(kind+" "+name+" "+source), " ")
		}
		if k, ok := strings.CutPrefix(line, "kind: "); ok && kind == "" {
			kind = k
		}
		if n, ok := strings.CutPrefix(line, "  name: "); ok && name == "" {
			name = n
		}
		if line == "---" {
			return ""
		}
	}
	return ""
}
