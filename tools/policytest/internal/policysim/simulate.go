// Package policysim runs the chart's policies offline, as the API server and Kyverno's engines would on a write:
// the user's VirtualIngresses and VirtualHTTPRoutes checked against their CRDs and the chart's admission policies,
// then admitted on a simulated cluster through the ClusterPolicies or the CEL policies of one render. preview shows
// the outcome; compare holds two renders' outcomes side by side.
package policysim

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/crdschema"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kyvernosim"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

// EngineAuto renders the policy engine the values choose.
const EngineAuto = "auto"

// Inputs are the user's source objects (VirtualIngresses, VirtualHTTPRoutes) and cluster objects, read, checked
// and given uids.
type Inputs struct {
	Sources     []InputObject
	clusterObjs []InputObject
}

func (in Inputs) hasKind(gvk schema.GroupVersionKind) bool {
	for _, s := range in.Sources {
		if s.Obj.GroupVersionKind() == gvk {
			return true
		}
	}
	return false
}

// ReadInputs reads the source objects of sourceFiles and the cluster's objects. With independent, the sources
// are separate writes (compare) and may share a name; otherwise (preview, one cluster state) every object must be
// unique.
func ReadInputs(sourceFiles, clusterFiles []string, independent bool) (Inputs, error) {
	sources, err := ReadObjects(sourceFiles, SourceGVKs()...)
	if err != nil {
		return Inputs{}, err
	}
	clusterObjs, err := ReadObjects(clusterFiles, serviceGVK, namespaceGVK)
	if err != nil {
		return Inputs{}, err
	}
	unique := clusterObjs
	if !independent {
		unique = append(append([]InputObject{}, sources...), clusterObjs...)
	}
	if err := checkUnique(unique); err != nil {
		return Inputs{}, err
	}
	for _, s := range sources {
		fakeUID(s.Obj)
	}
	return Inputs{Sources: sources, clusterObjs: clusterObjs}, nil
}

// RenderEngine renders the chart with the values files, extra on top and, unless engine is auto, policy.engine set
// to engine.
func RenderEngine(chart string, valuesFiles []string, extra map[string]any, engine string) (ChartParts, error) {
	extra = maps.Clone(extra)
	switch engine {
	case EngineAuto, "":
	case policyengine.ClusterPolicy, policyengine.GeneratingPolicy:
		if extra == nil {
			extra = map[string]any{}
		}
		extra["policy"] = map[string]any{"engine": engine}
	default:
		return ChartParts{}, fmt.Errorf("unknown engine %q: want %s, %s or %s", engine, policyengine.ClusterPolicy, policyengine.GeneratingPolicy, EngineAuto)
	}
	docs, err := render.Render(chart, valuesFiles, extra)
	if err != nil {
		return ChartParts{}, err
	}
	parts, err := splitChart(docs)
	if err != nil {
		return ChartParts{}, fmt.Errorf("%s: %w", chart, err)
	}
	if engine != EngineAuto && engine != "" && parts.engine() != engine {
		return ChartParts{}, fmt.Errorf("%s: policy.engine=%s renders %s policies", chart, engine, parts.engine())
	}
	return parts, nil
}

// CheckSources rejects, before any Kyverno policy runs, a source the API server would reject (its CRD's schema, then,
// with admission, the chart's ValidatingAdmissionPolicies in the namespaces of in) and one the render has no policies
// for.
func CheckSources(parts ChartParts, in Inputs, admission bool) error {
	namespaces := map[string]*corev1.Namespace{}
	for _, o := range clusterObjects(in.Sources, in.clusterObjs) {
		if o.GroupVersionKind() == namespaceGVK {
			// The API server labels every namespace with its name; the chart's namespace selectors use that label.
			labels := map[string]string{corev1.LabelMetadataName: o.GetName()}
			maps.Copy(labels, o.GetLabels())
			namespaces[o.GetName()] = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.GetName(), Labels: labels}}
		}
	}
	validators := map[schema.GroupVersionKind]*crdschema.Validator{}
	for _, src := range in.Sources {
		gvk := src.Obj.GroupVersionKind()
		s, err := parts.forKind(gvk)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", src.Where(), src.Name(), err)
		}
		if validators[gvk] == nil {
			if validators[gvk], err = crdschema.Load([]byte(s.crdYAML)); err != nil {
				return err
			}
		}
		if errs := validators[gvk].Validate(context.Background(), src.Obj); len(errs) > 0 {
			return fmt.Errorf("%s: %s would be rejected by the API server:\n%s", src.Where(), src.Name(), crdschema.Summary(errs))
		}
		if !admission {
			continue
		}
		gvr := gvk.GroupVersion().WithResource(s.crd.Spec.Names.Plural)
		for _, a := range parts.admission {
			refusal, err := a.refusal(src.Obj, gvr, namespaces[src.Obj.GetNamespace()])
			if err != nil {
				return fmt.Errorf("%s: %s: %w", src.Where(), src.Name(), err)
			}
			if refusal != "" {
				return fmt.Errorf("%s: %s would be refused by the API server: %s", src.Where(), src.Name(), refusal)
			}
		}
	}
	return nil
}

func NewCluster(parts ChartParts, in Inputs) (Cluster, error) {
	objs := clusterObjects(in.Sources, in.clusterObjs)
	fc, err := kyvernosim.NewCluster(parts.crds(), objs)
	if err != nil {
		return Cluster{}, err
	}
	c := Cluster{cluster: fc}
	for _, o := range objs {
		if o.GroupVersionKind() == namespaceGVK {
			c.namespaces = append(c.namespaces, o)
		}
	}
	return c, nil
}

func clusterObjects(sources, given []InputObject) []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	defined := map[string]bool{}
	for _, o := range given {
		objs = append(objs, o.Obj)
		if o.Obj.GroupVersionKind() == namespaceGVK {
			defined[o.Obj.GetName()] = true
		}
	}
	for _, o := range append(append([]InputObject{}, sources...), given...) {
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
