// Package convert is the convert verb: it prints the VirtualHTTPRoutes equivalent to Ingresses and VirtualIngresses,
// and what of them does not carry over.
package convert

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

type convertOptions struct {
	files   []string
	gateway string
}

// NewCommand is the convert verb.
func NewCommand() *cobra.Command {
	o := convertOptions{}
	cmd := &cobra.Command{
		Use:   "convert -f ingresses.yaml [--gateway [namespace/]name]",
		Short: "Print the VirtualHTTPRoutes equivalent to Ingresses and VirtualIngresses, and what does not carry over",
		Long: `Reads networking.k8s.io/v1 Ingresses and virtual-ingress.io/v1alpha1 VirtualIngresses (or Lists of them, as
kubectl get -o yaml prints) from -f ("-" reads stdin) and prints the equivalent VirtualHTTPRoutes as YAML
documents, mapped as Gateway API's guide to migrating from Ingress does:
  - one route per host (an HTTPRoute's rules apply to all of its hostnames), and one without hostnames for the
    rules without a host and the defaultBackend, which becomes a last catch-all rule (PathPrefix /);
  - each path one rule: Prefix -> PathPrefix, Exact -> Exact, ImplementationSpecific -> PathPrefix (noted);
  - a Service backend a backendRef by name or, from a VirtualIngress, by matchLabels; a named port stays a name;
  - parentRefs: the --gateway, else a Gateway named after the ingressClassName, else the placeholder "gateway".
A source that yields one route gives it its name; else the route without hostnames keeps the source's name and a
host's route is <source>-<host> with dots as dashes (web-shop-example-com), hashed when longer than 63 characters
or not unique.

What does not carry over is listed, never dropped: TLS (it belongs on a Gateway listener), every annotation,
ImplementationSpecific paths, resource backends, named ports of Services picked by name. Each such note is a
"# convert:" comment at the head of the documents it concerns and a line on stderr. Fails, printing nothing, on
input that is not YAML, on other kinds, and on sources the API server would refuse.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConvert(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	cmd.Flags().StringArrayVarP(&o.files, "filename", "f", nil, "YAML file of Ingresses and VirtualIngresses, - for stdin (repeatable)")
	cmd.Flags().StringVar(&o.gateway, "gateway", "", "Gateway every route attaches to, as [namespace/]name (default: one named after the ingressClassName)")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// conversion is what one source becomes.
type conversion struct {
	source convertSource
	notes  []string // about the source as a whole: on every one of its routes
	routes []convertedRoute
}

type convertedRoute struct {
	route  virtualHTTPRoute
	covers string   // which of the source's rules it holds, for its header comment
	notes  []string // about this route only
}

// runConvert converts everything before it writes anything: on an error, stdout stays empty rather than holding
// the routes of half the input.
func runConvert(stdin io.Reader, out, notesOut io.Writer, o convertOptions) error {
	gateway, err := parseGatewayFlag(o.gateway)
	if err != nil {
		return err
	}
	sources, err := readConvertSources(stdin, o.files)
	if err != nil {
		return err
	}
	conversions := make([]conversion, 0, len(sources))
	for _, s := range sources {
		c, err := convertOne(s, gateway)
		if err != nil {
			return fmt.Errorf("%s: %s %s: %w", s.where, s.obj.Kind, s.id(), err)
		}
		conversions = append(conversions, c)
	}
	if err := checkUniqueRoutes(conversions); err != nil {
		return err
	}
	if err := writeRoutes(out, conversions); err != nil {
		return err
	}
	return writeNotes(notesOut, conversions)
}

// parseGatewayFlag reads --gateway; nil when it is not given.
func parseGatewayFlag(flag string) (*parentRef, error) {
	if flag == "" {
		return nil, nil
	}
	namespace, name, hasNamespace := strings.Cut(flag, "/")
	if !hasNamespace {
		namespace, name = "", flag
	}
	if name == "" || strings.Contains(name, "/") || (hasNamespace && namespace == "") {
		return nil, fmt.Errorf("--gateway %q: want [namespace/]name", flag)
	}
	return &parentRef{Name: name, Namespace: namespace}, nil
}

// checkUniqueRoutes refuses two routes of the same namespace and name: applied, the second would replace the first.
func checkUniqueRoutes(conversions []conversion) error {
	first := map[string]convertSource{}
	for _, c := range conversions {
		for _, r := range c.routes {
			key := r.route.Metadata.Namespace + "/" + r.route.Metadata.Name
			if prev, dup := first[key]; dup {
				return fmt.Errorf("%s: %s %s and %s: %s %s both convert to VirtualHTTPRoute %s; rename one",
					prev.where, prev.obj.Kind, prev.id(), c.source.where, c.source.obj.Kind, c.source.id(), strings.TrimPrefix(key, "/"))
			}
			first[key] = c.source
		}
	}
	return nil
}
