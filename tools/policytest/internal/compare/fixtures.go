package compare

import (
	"path/filepath"
	"slices"
	"sort"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/policysim"
)

// defaultCompareOptions are compare's inputs when the user names none: the repository's fixtures of both source
// kinds, under root (the repository's root, relative to the working directory).
func defaultCompareOptions(root string) (compareOptions, error) {
	at := func(path string) string { return filepath.Join(root, path) }
	glob := func(pattern string) ([]string, error) {
		files, err := filepath.Glob(at(pattern))
		sort.Strings(files)
		return files, err
	}
	vis, err := glob("fixtures/virtualingresses/*.yaml")
	if err != nil {
		return compareOptions{}, err
	}
	viUpdates, err := glob("fixtures/virtualingresses/updates/*.yaml")
	if err != nil {
		return compareOptions{}, err
	}
	routes, err := glob("fixtures/virtualhttproutes/*.yaml")
	if err != nil {
		return compareOptions{}, err
	}
	routeUpdates, err := glob("fixtures/virtualhttproutes/updates/*.yaml")
	if err != nil {
		return compareOptions{}, err
	}
	// fixtures/virtualhttproutes/ also holds the generate suites' input, a route as stored (status included), which
	// only an UPDATE reads: a CREATE recomputes the status from nothing.
	routes, stored, err := splitStored(routes)
	if err != nil {
		return compareOptions{}, err
	}
	return compareOptions{
		creates: slices.Concat(
			[]string{at("fixtures/examples/virtualingresses.yaml")}, vis,
			[]string{at("fixtures/examples/virtualhttproutes.yaml")}, routes),
		updates:  slices.Concat(viUpdates, stored, routeUpdates),
		services: []string{at("fixtures/clusters/tenant-root.yaml")},
		chart:    at("charts/virtual-ingress"),
	}, nil
}

// splitStored tells the files of objects to create from those holding stored objects: a document with a status
// makes its file one of the latter.
func splitStored(files []string) (creates, stored []string, err error) {
	objs, err := policysim.ReadObjects(files, policysim.SourceGVKs()...)
	if err != nil {
		return nil, nil, err
	}
	hasStatus := map[string]bool{}
	for _, o := range objs {
		if _, ok := o.Obj.Object["status"]; ok {
			hasStatus[o.File] = true
		}
	}
	for _, f := range files {
		if hasStatus[f] {
			stored = append(stored, f)
		} else {
			creates = append(creates, f)
		}
	}
	return creates, stored, nil
}
