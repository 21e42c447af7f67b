package api_test

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
)

type document struct {
	OpenAPI    string                           `json:"openapi"`
	Paths      map[string]map[string]any        `json:"paths"`
	Components struct{ Schemas map[string]any } `json:"components"`
}

// The document describes exactly the served routes: no route is missing from it, none is described that
// is not served.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc document
	if err := yaml.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi: %q, want 3.x", doc.OpenAPI)
	}
	var documented, served []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, r := range api.Routes() {
		served = append(served, r.Method+" "+r.Pattern)
	}
	sort.Strings(documented)
	sort.Strings(served)
	if !reflect.DeepEqual(documented, served) {
		t.Errorf("openapi.yaml and the routes differ:\ndocumented: %v\nserved:     %v", documented, served)
	}
}

// Every $ref points at something the document defines.
func TestOpenAPIRefsResolve(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, child := range x {
				if k == "$ref" {
					ref, _ := child.(string)
					parts := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
					var cur any = doc
					for _, p := range parts {
						m, ok := cur.(map[string]any)
						if !ok || m[p] == nil {
							t.Errorf("$ref %q does not resolve", ref)
							return
						}
						cur = m[p]
					}
					continue
				}
				walk(child)
			}
		case []any:
			for _, child := range x {
				walk(child)
			}
		}
	}
	walk(doc)
}

// jsonFields are the JSON names of a struct's fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Each schema of the document has exactly the fields the served type has.
func TestOpenAPISchemasMatchTypes(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := yaml.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{
		"Error": api.Error{}, "Ref": api.Ref{}, "Check": api.Check{}, "Readiness": api.Readiness{}, "Session": api.Session{},
		"Org": api.Org{}, "User": api.User{}, "VDC": api.VDC{}, "Capacity": api.Capacity{}, "Catalog": api.Catalog{},
		"CatalogItem": api.CatalogItem{}, "Parameter": kube.Parameter{}, "InstantiateRequest": api.InstantiateRequest{},
		"VApp": api.VApp{}, "Role": api.Role{}, "Task": api.Task{}, "TaskRef": api.TaskRef{},
		"Region": api.Region{}, "Zone": api.Zone{}, "Supervisor": api.Supervisor{}, "StorageClass": api.StorageClass{},
		"VCenter": api.VCenter{},
	} {
		schema, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("schema %s missing", name)
			continue
		}
		var documented []string
		for p := range schema.Properties {
			documented = append(documented, p)
		}
		sort.Strings(documented)
		if served := jsonFields(reflect.TypeOf(v)); !reflect.DeepEqual(documented, served) {
			t.Errorf("schema %s: documented %v, served %v", name, documented, served)
		}
	}
	var page []string
	for p := range doc.Components.Schemas["Page"].Properties {
		page = append(page, p)
	}
	sort.Strings(page)
	if served := jsonFields(reflect.TypeOf(api.Paged[int]{})); !reflect.DeepEqual(append(page, "values"), served) {
		t.Errorf("schema Page: documented %v (+ values), served %v", page, served)
	}
}
