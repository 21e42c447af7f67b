package main

import (
	"context"
	"fmt"
	"io"
	"maps"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/crdschema"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kyvernosim"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

type previewOptions struct {
	sources  []string
	services []string
	values   []string
	chart    string
	engine   string
}

func newPreviewCommand() *cobra.Command {
	o := previewOptions{engine: engineAuto}
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

const engineAuto = "auto"

func runPreview(out io.Writer, o previewOptions) error {
	in, err := readSimInputs(o.sources, o.services, false)
	if err != nil {
		return err
	}
	extra, err := enablingValues(o.values, in)
	if err != nil {
		return err
	}
	parts, err := renderEngine(o.chart, o.values, extra, o.engine)
	if err != nil {
		return err
	}
	if err := checkSources(parts, in, true); err != nil {
		return err
	}
	c, err := newSimCluster(parts, in)
	if err != nil {
		return err
	}
	var results []*unstructured.Unstructured
	for _, src := range in.sources {
		adm, err := admit(parts, c, src.Obj, kyvernov1.Create)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", src.where(), src.name(), err)
		}
		results = append(results, adm.generated...)
		results = append(results, adm.stored)
	}
	return writeDocuments(out, results)
}

// simInputs are the user's source objects (VirtualIngresses, VirtualHTTPRoutes) and cluster objects, read, checked
// and given uids.
type simInputs struct {
	sources     []inputObject
	clusterObjs []inputObject
}

func (in simInputs) hasKind(gvk schema.GroupVersionKind) bool {
	for _, s := range in.sources {
		if s.Obj.GroupVersionKind() == gvk {
			return true
		}
	}
	return false
}

// readSimInputs reads the source objects of sourceFiles and the cluster's objects. With independent, the sources
// are separate writes (compare) and may share a name; otherwise (preview, one cluster state) every object must be
// unique.
func readSimInputs(sourceFiles, clusterFiles []string, independent bool) (simInputs, error) {
	sources, err := readInputs(sourceFiles, sourceGVKs()...)
	if err != nil {
		return simInputs{}, err
	}
	clusterObjs, err := readInputs(clusterFiles, serviceGVK, namespaceGVK)
	if err != nil {
		return simInputs{}, err
	}
	unique := clusterObjs
	if !independent {
		unique = append(append([]inputObject{}, sources...), clusterObjs...)
	}
	if err := checkUnique(unique); err != nil {
		return simInputs{}, err
	}
	for _, s := range sources {
		fakeUID(s.Obj)
	}
	return simInputs{sources: sources, clusterObjs: clusterObjs}, nil
}

// renderEngine renders the chart with the values files, extra on top and, unless engine is auto, policy.engine set
// to engine.
func renderEngine(chart string, valuesFiles []string, extra map[string]any, engine string) (chartParts, error) {
	extra = maps.Clone(extra)
	switch engine {
	case engineAuto, "":
	case policyengine.ClusterPolicy, policyengine.GeneratingPolicy:
		if extra == nil {
			extra = map[string]any{}
		}
		extra["policy"] = map[string]any{"engine": engine}
	default:
		return chartParts{}, fmt.Errorf("unknown engine %q: want %s, %s or %s", engine, policyengine.ClusterPolicy, policyengine.GeneratingPolicy, engineAuto)
	}
	docs, err := render.Render(chart, valuesFiles, extra)
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

// checkSources rejects, before any Kyverno policy runs, a source the API server would reject (its CRD's schema, then,
// with admission, the chart's ValidatingAdmissionPolicies in the namespaces of in) and one the render has no policies
// for.
func checkSources(parts chartParts, in simInputs, admission bool) error {
	namespaces := map[string]*corev1.Namespace{}
	for _, o := range clusterObjects(in.sources, in.clusterObjs) {
		if o.GroupVersionKind() == namespaceGVK {
			// The API server labels every namespace with its name; the chart's namespace selectors use that label.
			labels := map[string]string{corev1.LabelMetadataName: o.GetName()}
			maps.Copy(labels, o.GetLabels())
			namespaces[o.GetName()] = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.GetName(), Labels: labels}}
		}
	}
	validators := map[schema.GroupVersionKind]*crdschema.Validator{}
	for _, src := range in.sources {
		gvk := src.Obj.GroupVersionKind()
		s, err := parts.forKind(gvk)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", src.where(), src.name(), err)
		}
		if validators[gvk] == nil {
			if validators[gvk], err = crdschema.Load([]byte(s.crdYAML)); err != nil {
				return err
			}
		}
		if errs := validators[gvk].Validate(context.Background(), src.Obj); len(errs) > 0 {
			return fmt.Errorf("%s: %s would be rejected by the API server:\n%s", src.where(), src.name(), crdschema.Summary(errs))
		}
		if !admission {
			continue
		}
		gvr := gvk.GroupVersion().WithResource(s.crd.Spec.Names.Plural)
		for _, a := range parts.admission {
			refusal, err := a.refusal(src.Obj, gvr, namespaces[src.Obj.GetNamespace()])
			if err != nil {
				return fmt.Errorf("%s: %s: %w", src.where(), src.name(), err)
			}
			if refusal != "" {
				return fmt.Errorf("%s: %s would be refused by the API server: %s", src.where(), src.name(), refusal)
			}
		}
	}
	return nil
}

func newSimCluster(parts chartParts, in simInputs) (simCluster, error) {
	objs := clusterObjects(in.sources, in.clusterObjs)
	fc, err := kyvernosim.NewCluster(parts.crds(), objs)
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

func clusterObjects(sources, given []inputObject) []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	defined := map[string]bool{}
	for _, o := range given {
		objs = append(objs, o.Obj)
		if o.Obj.GroupVersionKind() == namespaceGVK {
			defined[o.Obj.GetName()] = true
		}
	}
	for _, o := range append(append([]inputObject{}, sources...), given...) {
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
