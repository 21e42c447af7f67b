package kube

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Parameter is one of a Template's parameters.
type Parameter struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
	Value       string `json:"value,omitempty"`
	Generate    string `json:"generate,omitempty"`
	From        string `json:"from,omitempty"`
	Required    bool   `json:"required"`
}

// Template is a catalog item's source.
type Template struct {
	Name, DisplayName, Description, Version string
	Parameters                              []Parameter
	// object is the cached Template; it must not be modified.
	object          *unstructured.Unstructured
	resourceVersion string
}

// Templates lists the catalog's Templates from the informer cache, by name: no API request is made.
func (k *Cluster) Templates(ctx context.Context) ([]Template, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(TemplateGVK.GroupVersion().WithKind("TemplateList"))
	if err := k.client.List(ctx, list, client.InNamespace(k.opts.TemplateNamespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing Templates: %w", err)
	}
	out := make([]Template, 0, len(list.Items))
	k.templatesMu.Lock()
	defer k.templatesMu.Unlock()
	converted := make(map[string]Template, len(list.Items))
	for i := range list.Items {
		u := &list.Items[i]
		if _, ok := u.GetAnnotations()[AnnotationContainerDisks]; !ok {
			continue
		}
		// Converting (and copying the parameters of) every Template on every request would cost more than the
		// list itself: a Template is converted again only when its resourceVersion changes.
		t, ok := k.templates[u.GetName()]
		if !ok || t.resourceVersion != u.GetResourceVersion() {
			t = templateOf(u)
		}
		converted[t.Name] = t
		out = append(out, t)
	}
	k.templates = converted
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func templateOf(u *unstructured.Unstructured) Template {
	ann := u.GetAnnotations()
	t := Template{
		Name: u.GetName(), DisplayName: ann["openshift.io/display-name"], Description: ann["description"],
		Version: u.GetLabels()[LabelTemplateVersion], object: u, resourceVersion: u.GetResourceVersion(),
	}
	if t.DisplayName == "" {
		t.DisplayName = t.Name
	}
	params, _, _ := unstructured.NestedSlice(u.Object, "parameters")
	for _, p := range params {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		required, _ := m["required"].(bool)
		t.Parameters = append(t.Parameters, Parameter{
			Name: str("name"), DisplayName: str("displayName"), Description: str("description"), Value: str("value"),
			Generate: str("generate"), From: str("from"), Required: required,
		})
	}
	return t
}
