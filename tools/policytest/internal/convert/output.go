package convert

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// The VirtualHTTPRoute as convert writes it: only the fields an Ingress maps to. These are the tool's own types, not
// Gateway API's Go module, which needs a newer Go than this repository's; sigs.k8s.io/yaml writes their keys in
// alphabetical order, so output is byte-for-byte stable.
type virtualHTTPRoute struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Metadata   routeMeta `json:"metadata"`
	Spec       routeSpec `json:"spec"`
}

type routeMeta struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

type routeSpec struct {
	ParentRefs []parentRef `json:"parentRefs"`
	Hostnames  []string    `json:"hostnames,omitempty"`
	Rules      []routeRule `json:"rules"`
}

type parentRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type routeRule struct {
	Matches     []routeMatch `json:"matches"`
	BackendRefs []backendRef `json:"backendRefs"`
}

type routeMatch struct {
	Path pathMatch `json:"path"`
}

type pathMatch struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// backendRef is a Service picked by name or matchLabels (exactly one), or, from an Ingress resource backend, an
// object of another group and kind.
type backendRef struct {
	Group       string              `json:"group,omitempty"`
	Kind        string              `json:"kind,omitempty"`
	Name        string              `json:"name,omitempty"`
	MatchLabels map[string]string   `json:"matchLabels,omitempty"`
	Port        *intstr.IntOrString `json:"port,omitempty"`
}

const (
	virtualHTTPRouteAPIVersion = "virtual-ingress.io/v1alpha1"
	virtualHTTPRouteKind       = "VirtualHTTPRoute"
	// noteComment starts each note in the YAML, so that `grep '# convert:'` lists what is left to do.
	noteComment = "# convert: "
)

// writeRoutes writes each route as a YAML document headed by comments: where it came from, then its notes.
func writeRoutes(out io.Writer, conversions []conversion) error {
	first := true
	for _, c := range conversions {
		for _, r := range c.routes {
			data, err := yaml.Marshal(r.route)
			if err != nil {
				return err
			}
			var doc strings.Builder
			if !first {
				doc.WriteString("---\n")
			}
			first = false
			fmt.Fprintf(&doc, "# From %s %s, %s (policytest convert).\n", c.source.obj.Kind, c.source.id(), r.covers)
			for _, n := range append(append([]string{}, c.notes...), r.notes...) {
				doc.WriteString(noteComment + n + "\n")
			}
			doc.Write(data)
			if _, err := io.WriteString(out, doc.String()); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeNotes prints every note once, prefixed with its source, for whoever reads only the terminal.
func writeNotes(out io.Writer, conversions []conversion) error {
	for _, c := range conversions {
		notes := append([]string{}, c.notes...)
		for _, r := range c.routes {
			notes = append(notes, r.notes...)
		}
		for _, n := range notes {
			if _, err := fmt.Fprintf(out, "%s: %s\n", c.source.id(), n); err != nil {
				return err
			}
		}
	}
	return nil
}
