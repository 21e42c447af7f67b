package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/kubectl/pkg/describe"
)

// kubectl prints what `kubectl get` and `kubectl describe` show, with kubectl's own code: the table is the API server's
// (the CRD's printer columns), the description kubectl's generic describer. The demo's output cannot drift from what a
// user sees.
type kubectl struct {
	cfg *rest.Config
}

func (k kubectl) get(ctx context.Context, gvr schema.GroupVersionResource, namespace string) error {
	cfg := rest.CopyConfig(k.cfg)
	cfg.GroupVersion = &schema.GroupVersion{Group: gvr.Group, Version: gvr.Version}
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	client, err := rest.RESTClientFor(cfg)
	if err != nil {
		return err
	}
	table := &metav1.Table{}
	err = client.Get().Namespace(namespace).Resource(gvr.Resource).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Into(table)
	if err != nil {
		return err
	}
	fmt.Printf("\n$ kubectl get %s -n %s\n", gvr.Resource, namespace)
	return printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(table, os.Stdout)
}

func (k kubectl) describe(gvr schema.GroupVersionResource, kind, namespace, name string) error {
	mapping := &meta.RESTMapping{
		Resource:         gvr,
		GroupVersionKind: gvr.GroupVersion().WithKind(kind),
		Scope:            meta.RESTScopeNamespace,
	}
	d, ok := describe.GenericDescriberFor(mapping, k.cfg)
	if !ok {
		return fmt.Errorf("no describer for %s", gvr)
	}
	out, err := d.Describe(namespace, name, describe.DescriberSettings{ShowEvents: true})
	if err != nil {
		return err
	}
	fmt.Printf("\n$ kubectl describe %s -n %s %s\n%s", gvr.Resource, namespace, name, out)
	return nil
}
