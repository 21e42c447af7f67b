// Package preview is the preview verb: what the chart's policies make of a user's VirtualIngresses and
// VirtualHTTPRoutes, printed as the objects a cluster would hold.
package preview

import (
	"fmt"
	"io"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/policysim"
)

type previewOptions struct {
	sources  []string
	services []string
	values   []string
	chart    string
	engine   string
}

// NewCommand is the preview verb.
func NewCommand() *cobra.Command {
	o := previewOptions{engine: policysim.EngineAuto}
	cmd := &cobra.Command{
		Use:   "preview -f virtualingresses.yaml -s services.yaml",
		Short: "Show, without a cluster, the Ingress or HTTPRoute and status the chart's policies give each VirtualIngress or VirtualHTTPRoute",
		Long: `Simulates the creation of every VirtualIngress and VirtualHTTPRoute in -f on a cluster that holds the Services
(and optionally Namespaces) in -s and runs the chart's Kyverno policies, rendered with --values. Prints, for each,
the generated Ingress or HTTPRoute (if it resolves) and the object with the status the policies computed, as YAML
documents. Fails on input the API server would reject and on policy errors; a backend that matches no Service is a
valid result, shown in the status. -s also takes a kyverno test ClusterResource file (its spec.resources).
With VirtualHTTPRoutes, gatewayAPI.routes is true unless --values set it: the chart's auto renders the route
policies only on a cluster that serves HTTPRoutes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPreview(cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().StringArrayVarP(&o.sources, "filename", "f", nil, "YAML file of VirtualIngresses and VirtualHTTPRoutes (repeatable)")
	cmd.Flags().StringArrayVarP(&o.services, "services", "s", nil, "YAML file of the Services (and Namespaces) the cluster has (repeatable)")
	cmd.Flags().StringArrayVar(&o.values, "values", nil, "values file for the chart, as for helm install (repeatable)")
	cmd.Flags().StringVar(&o.chart, "chart", "charts/virtual-ingress", "chart directory")
	cmd.Flags().StringVar(&o.engine, "engine", o.engine, "policy engine to render: clusterPolicy, generatingPolicy, or auto (as the values say; the chart's auto renders ClusterPolicies without a cluster)")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

func runPreview(out io.Writer, o previewOptions) error {
	in, err := policysim.ReadInputs(o.sources, o.services, false)
	if err != nil {
		return err
	}
	extra, err := policysim.EnablingValues(o.values, in)
	if err != nil {
		return err
	}
	parts, err := policysim.RenderEngine(o.chart, o.values, extra, o.engine)
	if err != nil {
		return err
	}
	if err := policysim.CheckSources(parts, in, true); err != nil {
		return err
	}
	c, err := policysim.NewCluster(parts, in)
	if err != nil {
		return err
	}
	var results []*unstructured.Unstructured
	for _, src := range in.Sources {
		adm, err := policysim.Admit(parts, c, src.Obj, kyvernov1.Create)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", src.Where(), src.Name(), err)
		}
		results = append(results, adm.Generated...)
		results = append(results, adm.Stored)
	}
	return writeDocuments(out, results)
}

func writeDocuments(out io.Writer, objs []*unstructured.Unstructured) error {
	for i, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(out, "---\n"); err != nil {
				return err
			}
		}
		if _, err := out.Write(data); err != nil {
			return err
		}
	}
	return nil
}
