package main

import (
	"context"
	"fmt"
	"io"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/crdschema"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kyvernosim"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

type previewOptions struct {
	virtualIngresses []string
	services         []string
	values           []string
	chart            string
	engine           string
}

func newPreviewCommand() *cobra.Command {
	o := previewOptions{engine: engineAuto}
	cmd := &cobra.Command{
		Use:   "preview -f virtualingresses.yaml -s services.yaml",
		Short: "Show, without a cluster, the Ingress and status the chart's policies give each VirtualIngress",
		Long: `Simulates the creation of every VirtualIngress in -f on a cluster that holds the Services (and optionally
Namespaces) in -s and runs the chart's Kyverno policies, rendered with --values. Prints, for each VirtualIngress,
the generated Ingress (if it resolves) and the VirtualIngress with the status the policies computed, as YAML
documents. Fails on input the API server would reject and on policy errors; a backend that matches no Service is a
valid result, shown in the status. -s also takes a kyverno test ClusterResource file (its spec.resources).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPreview(cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().StringArrayVarP(&o.virtualIngresses, "filename", "f", nil, "YAML file of VirtualIngresses (repeatable)")
	cmd.Flags().StringArrayVarP(&o.services, "services", "s", nil, "YAML file of the Services (and Namespaces) the cluster has (repeatable)")
	cmd.Flags().StringArrayVar(&o.values, "values", nil, "values file for the chart, as for helm install (repeatable)")
	cmd.Flags().StringVar(&o.chart, "chart", "charts/virtual-ingress", "chart directory")
	cmd.Flags().StringVar(&o.engine, "engine", o.engine, "policy engine to render: clusterPolicy, generatingPolicy, or auto (as the values say; the chart's auto renders ClusterPolicies without a cluster)")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

const engineAuto = "auto"

func runPreview(out io.Writer, o previewOptions) error {
	in, err := readSimInputs(o.virtualIngresses, o.services, false)
	if err != nil {
		return err
	}
	parts, err := renderEngine(o.chart, o.values, o.engine)
	if err != nil {
		return err
	}
	if err := validateVirtualIngresses(parts, in.vis); err != nil {
		return err
	}
	c, err := newSimCluster(parts, in)
	if err != nil {
		return err
	}
	var results []*unstructured.Unstructured
	for _, vi := range in.vis {
		adm, err := admit(parts, c, vi.Obj, kyvernov1.Create)
		if err != nil {
			return fmt.Errorf("%s: VirtualIngress %s/%s: %w", vi.where(), vi.Obj.GetNamespace(), vi.Obj.GetName(), err)
		}
		results = append(results, adm.generated...)
		results = append(results, adm.stored)
	}
	return writeDocuments(out, results)
}

// simInputs are the user's VirtualIngresses and cluster objects, read, checked and given uids.
type simInputs struct {
	vis         []inputObject
	clusterObjs []inputObject
}

// readSimInputs reads the VirtualIngresses of viFiles and the cluster's objects. With independent, the
// VirtualIngresses are separate writes (compare) and may share a name; otherwise (preview, one cluster state) every
// object must be unique.
func readSimInputs(viFiles, clusterFiles []string, independent bool) (simInputs, error) {
	vis, err := readInputs(viFiles, virtualIngressGVK)
	if err != nil {
		return simInputs{}, err
	}
	clusterObjs, err := readInputs(clusterFiles, serviceGVK, namespaceGVK)
	if err != nil {
		return simInputs{}, err
	}
	unique := clusterObjs
	if !independent {
		unique = append(append([]inputObject{}, vis...), clusterObjs...)
	}
	if err := checkUnique(unique); err != nil {
		return simInputs{}, err
	}
	for _, vi := range vis {
		fakeUID(vi.Obj)
	}
	return simInputs{vis: vis, clusterObjs: clusterObjs}, nil
}

// renderEngine renders the chart with the values files and, unless engine is auto, policy.engine set to engine.
func renderEngine(chart string, values []string, engine string) (chartParts, error) {
	var extra map[string]any
	switch engine {
	case engineAuto, "":
	case policyengine.ClusterPolicy, policyengine.GeneratingPolicy:
		extra = map[string]any{"policy": map[string]any{"engine": engine}}
	default:
		return chartParts{}, fmt.Errorf("unknown engine %q: want %s, %s or %s", engine, policyengine.ClusterPolicy, policyengine.GeneratingPolicy, engineAuto)
	}
	docs, err := render.Render(chart, values, extra)
	if err != nil {
		return chartParts{}, err
	}
	parts, err := splitChart(docs)
	if err != nil {
		return chartParts{}, fmt.Errorf("%s: %w", chart, err)
	}
	if engine != engineAuto && engine != "" && parts.engine() != engine {
		return chartParts{}, fmt.Errorf("%s: policy.engine=%s renders %s policies", chart, engine, parts.engine())
	}
	return parts, nil
}

func validateVirtualIngresses(parts chartParts, vis []inputObject) error {
	validator, err := crdschema.Load([]byte(parts.crdYAML))
	if err != nil {
		return err
	}
	for _, vi := range vis {
		if errs := validator.Validate(context.Background(), vi.Obj); len(errs) > 0 {
			return fmt.Errorf("%s: VirtualIngress %s/%s would be rejected by the API server:\n%s",
				vi.where(), vi.Obj.GetNamespace(), vi.Obj.GetName(), crdschema.Summary(errs))
		}
	}
	return nil
}

func newSimCluster(parts chartParts, in simInputs) (simCluster, error) {
	objs := clusterObjects(in.vis, in.clusterObjs)
	fc, err := kyvernosim.NewCluster([]*apiextensionsv1.CustomResourceDefinition{parts.crd}, objs)
	if err != nil {
		return simCluster{}, err
	}
	c := simCluster{cluster: fc}
	for _, o := range objs {
		if o.GroupVersionKind() == namespaceGVK {
			c.namespaces = append(c.namespaces, o)
		}
	}
	return c, nil
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
