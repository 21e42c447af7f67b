package kyvernosim

import (
	"fmt"
	"strings"

	"github.com/kyverno/kyverno/ext/cluster"
	"github.com/kyverno/kyverno/pkg/clients/dclient"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

var (
	ServiceGVK   = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	NamespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
)

// Cluster is what the policies see through apiCalls and mutate-existing targets. Lists are per namespace, like the
// API server's.
type Cluster struct {
	Client     dclient.Interface
	RESTMapper meta.RESTMapper
	// services and virtualIngresses are what Kyverno's informers of them (GlobalContextEntries) hold.
	services, virtualIngresses []*unstructured.Unstructured
}

// NewCluster holds objects of Services, Namespaces and the kinds of the given CRDs. Kinds are registered up front
// rather than from the objects (as the CLI's fake cluster does): with no Service given, a list of Services must
// return nothing, not panic in the fake client.
func NewCluster(crds []*apiextensionsv1.CustomResourceDefinition, objects []*unstructured.Unstructured) (Cluster, error) {
	kinds := map[schema.GroupVersionResource]schema.GroupVersionKind{
		{Version: "v1", Resource: "services"}:   ServiceGVK,
		{Version: "v1", Resource: "namespaces"}: NamespaceGVK,
	}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
			kinds[gv.WithResource(crd.Spec.Names.Plural)] = gv.WithKind(crd.Spec.Names.Kind)
		}
	}
	scheme := runtime.NewScheme()
	listKinds := map[schema.GroupVersionResource]string{}
	disco := discovery{IDiscovery: dclient.NewFakeDiscoveryClient(nil), kinds: kinds}
	for gvr, gvk := range kinds {
		scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
		scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
		listKinds[gvr] = gvk.Kind + "List"
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, listKinds)
	for _, o := range objects {
		gvr, err := disco.GetGVRFromGVK(o.GroupVersionKind())
		if err != nil {
			return Cluster{}, fmt.Errorf("%s/%s: %w", o.GetNamespace(), o.GetName(), err)
		}
		if err := dyn.Tracker().Create(gvr, o.DeepCopy(), o.GetNamespace()); err != nil {
			return Cluster{}, fmt.Errorf("%s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	var services, virtualIngresses []*unstructured.Unstructured
	for _, o := range objects {
		switch {
		case o.GroupVersionKind() == ServiceGVK:
			services = append(services, o.DeepCopy())
		case o.GetKind() == "VirtualIngress":
			virtualIngresses = append(virtualIngresses, o.DeepCopy())
		}
	}
	return Cluster{
		Client:           dclient.NewFakeClientWithDisco(dyn, kubefake.NewClientset(), disco),
		RESTMapper:       cluster.NewFake().RESTMapper(crds),
		services:         services,
		virtualIngresses: virtualIngresses,
	}, nil
}

// discovery answers from the registered kinds. Kyverno's fake discovery finds a resource by appending "s" to the
// lower-cased kind, which misses every kind whose plural is not that (VirtualIngress -> virtualingresses), so
// mutate-existing targets of such kinds could not be loaded.
type discovery struct {
	dclient.IDiscovery
	kinds map[schema.GroupVersionResource]schema.GroupVersionKind
}

func (d discovery) resourceFor(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	for gvr, k := range d.kinds {
		if k == gvk {
			return gvr
		}
	}
	return schema.GroupVersionResource{}
}

func (d discovery) FindResources(group, version, kind, subresource string) (map[dclient.TopLevelApiDescription]metav1.APIResource, error) {
	for gvr, gvk := range d.kinds {
		if !strings.EqualFold(gvk.Kind, kind) || (group != "*" && group != gvk.Group) || (version != "*" && version != "" && version != gvk.Version) {
			continue
		}
		desc := dclient.TopLevelApiDescription{GroupVersion: gvk.GroupVersion(), Kind: gvk.Kind, Resource: gvr.Resource, SubResource: subresource}
		return map[dclient.TopLevelApiDescription]metav1.APIResource{desc: {Name: gvr.Resource, Kind: gvk.Kind, Namespaced: gvk.Kind != "Namespace"}}, nil
	}
	return nil, fmt.Errorf("kind %s/%s %s is not served by the simulated cluster", group, version, kind)
}

func (d discovery) GetGVRFromGVK(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	if gvr := d.resourceFor(gvk); gvr.Resource != "" {
		return gvr, nil
	}
	return schema.GroupVersionResource{}, fmt.Errorf("kind %s is not served by the simulated cluster", gvk)
}

func (d discovery) GetGVKFromGVR(gvr schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	if gvk, ok := d.kinds[gvr]; ok {
		return gvk, nil
	}
	return schema.GroupVersionKind{}, fmt.Errorf("resource %s is not served by the simulated cluster", gvr)
}
