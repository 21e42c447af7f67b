package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/crdschema"
	"github.com/virtual-ingress/virtual-ingress/internal/kyvernosim"
	"github.com/virtual-ingress/virtual-ingress/internal/render"
)

type previewOptions struct {
	virtualIngresses []string
	services         []string
	values           []string
	chart            string
}

func newPreviewCommand() *cobra.Command {
	var o previewOptions
	cmd := &cobra.Command{
		Use:   "preview -f virtualingresses.yaml -s services.yaml",
		Short: "Show, without a cluster, the Ingress and status the chart's policies give each VirtualIngress",
		Long: `Simulates the creation of every VirtualIngress in -f on a cluster that holds the Services (and optionally
Namespaces) in -s and runs the chart's Kyverno policies, rendered with --values. Prints, for each VirtualIngress,
the generated Ingress (if it resolves) and the VirtualIngress with the status the policies computed, as YAML
documents. Fails on input the API server would reject and on policy errors; a backend that matches no Service is a
valid result, shown in the status.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPreview(cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().StringArrayVarP(&o.virtualIngresses, "filename", "f", nil, "YAML file of VirtualIngresses (repeatable)")
	cmd.Flags().StringArrayVarP(&o.services, "services", "s", nil, "YAML file of the Services (and Namespaces) the cluster has (repeatable)")
	cmd.Flags().StringArrayVar(&o.values, "values", nil, "values file for the chart, as for helm install (repeatable)")
	cmd.Flags().StringVar(&o.chart, "chart", "charts/virtual-ingress", "chart directory")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

func runPreview(out io.Writer, o previewOptions) error {
	vis, err := readInputs(o.virtualIngresses, virtualIngressGVK)
	if err != nil {
		return err
	}
	clusterObjs, err := readInputs(o.services, serviceGVK, namespaceGVK)
	if err != nil {
		return err
	}
	if err := checkUnique(append(append([]inputObject{}, vis...), clusterObjs...)); err != nil {
		return err
	}
	docs, err := render.Render(o.chart, o.values, nil)
	if err != nil {
		return err
	}
	parts, err := splitChart(docs)
	if err != nil {
		return fmt.Errorf("%s: %w", o.chart, err)
	}
	validator, err := crdschema.Load([]byte(parts.crdYAML))
	if err != nil {
		return fmt.Errorf("%s: %w", o.chart, err)
	}
	for _, vi := range vis {
		if errs := validator.Validate(context.Background(), vi.Obj); len(errs) > 0 {
			return fmt.Errorf("%s: VirtualIngress %s/%s would be rejected by the API server:\n%s",
				vi.where(), vi.Obj.GetNamespace(), vi.Obj.GetName(), crdschema.Summary(errs))
		}
	}
	fc, err := kyvernosim.NewCluster([]*apiextensionsv1.CustomResourceDefinition{parts.crd}, clusterObjects(vis, clusterObjs))
	if err != nil {
		return err
	}
	var results []*unstructured.Unstructured
	for _, vi := range vis {
		fakeUID(vi.Obj)
		adm, err := admitCreate(parts.policies, fc, vi.Obj)
		if err != nil {
			return fmt.Errorf("%s: VirtualIngress %s/%s: %w", vi.where(), vi.Obj.GetNamespace(), vi.Obj.GetName(), err)
		}
		results = append(results, adm.generated...)
		results = append(results, adm.stored)
	}
	return writeDocuments(out, results)
}

// clusterObjects is the fake cluster's content: the user's objects plus a Namespace for every namespace used
// that the user did not define. Kyverno reads the namespace of each request (for namespaceSelector), and a
// real cluster would have it.
func clusterObjects(vis, given []inputObject) []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	defined := map[string]bool{}
	for _, o := range given {
		objs = append(objs, o.Obj)
		if o.Obj.GroupVersionKind() == namespaceGVK {
			defined[o.Obj.GetName()] = true
		}
	}
	for _, o := range append(append([]inputObject{}, vis...), given...) {
		ns := o.Obj.GetNamespace()
		if ns == "" || defined[ns] {
			continue
		}
		defined[ns] = true
		n := &unstructured.Unstructured{}
		n.SetGroupVersionKind(namespaceGVK)
		n.SetName(ns)
		objs = append(objs, n)
	}
	return objs
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
