package crdschema

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// Validator checks objects of one CRD, all served versions.
type Validator struct {
	crd      *apiextensions.CustomResourceDefinition
	versions map[string]*version
}

type version struct {
	structural *structuralschema.Structural
	schema     validation.SchemaValidator
	cel        *cel.Validator
}

// LoadFile reads a CRD manifest (YAML) and prepares its validators.
func LoadFile(path string) (*Validator, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Load(data)
}

// Load prepares validators for a CRD manifest (YAML or JSON).
func Load(manifest []byte) (*Validator, error) {
	var external apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(manifest, &external); err != nil {
		return nil, fmt.Errorf("decoding CRD: %w", err)
	}
	// The API server defaults the CRD before it converts and validates it; do the same so that, for example,
	// conversion strategy and list types are set as on a cluster.
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&external)
	var crd apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&external, &crd, nil); err != nil {
		return nil, fmt.Errorf("converting CRD: %w", err)
	}
	v := &Validator{crd: &crd, versions: map[string]*version{}}
	for _, ver := range crd.Spec.Versions {
		// The internal form hoists a schema shared by every version to spec.validation.
		schema := crd.Spec.Validation
		if ver.Schema != nil {
			schema = ver.Schema
		}
		if schema == nil || schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("CRD %s version %s has no schema", crd.Name, ver.Name)
		}
		structural, err := structuralschema.NewStructural(schema.OpenAPIV3Schema)
		if err != nil {
			return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, ver.Name, err)
		}
		schemaValidator, _, err := validation.NewSchemaValidator(schema.OpenAPIV3Schema)
		if err != nil {
			return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, ver.Name, err)
		}
		v.versions[ver.Name] = &version{
			structural: structural,
			schema:     schemaValidator,
			cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
		}
	}
	return v, nil
}

// ValidateDefinition runs the API server's checks of the CRD itself (structural schema rules, CEL compilation and
// cost budgets), which decide whether a cluster accepts the CRD at all.
func (v *Validator) ValidateDefinition(ctx context.Context) field.ErrorList {
	return crdvalidation.ValidateCustomResourceDefinition(ctx, v.crd)
}

// Validate checks one object as a create request would: unknown fields (strict field validation), schema, CEL.
// It returns nil when the object would be accepted.
func (v *Validator) Validate(ctx context.Context, obj *unstructured.Unstructured) field.ErrorList {
	gvk := obj.GroupVersionKind()
	if gvk.Group != v.crd.Spec.Group || gvk.Kind != v.crd.Spec.Names.Kind {
		return field.ErrorList{field.Invalid(field.NewPath("kind"), gvk.String(),
			fmt.Sprintf("expected %s/%s", v.crd.Spec.Group, v.crd.Spec.Names.Kind))}
	}
	ver, ok := v.versions[gvk.Version]
	if !ok {
		return field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), obj.GetAPIVersion(), v.servedVersions())}
	}
	content, err := apiserverJSON(obj.Object)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	var errs field.ErrorList
	// The API server prunes, then applies the schema's defaults, then validates: CEL rules may rely on a default
	// (HTTPRoute's backendRef rules read group and kind, which default to "" and Service).
	for _, path := range pruning.PruneWithOptions(content, ver.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		errs = append(errs, field.Invalid(field.NewPath(path), nil, fmt.Sprintf("unknown field %q", path)))
	}
	structuraldefaulting.Default(content, ver.structural)
	errs = append(errs, validation.ValidateCustomResource(nil, content, ver.schema)...)
	celErrs, _ := ver.cel.Validate(ctx, nil, ver.structural, content, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// apiserverJSON copies obj as the API server would decode it: whole numbers become int64, not float64 (YAML decoders
// produce float64, which the CEL rules on integer fields would reject).
func apiserverJSON(obj map[string]any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, utiljson.Unmarshal(data, &out)
}

func (v *Validator) servedVersions() []string {
	var names []string
	for _, ver := range v.crd.Spec.Versions {
		names = append(names, ver.Name)
	}
	return names
}

// Summary formats errors the way kubectl prints an API server rejection, one cause per line.
func Summary(errs field.ErrorList) string {
	lines := make([]string, 0, len(errs))
	for _, err := range errs {
		lines = append(lines, err.Error())
	}
	return strings.Join(lines, "\n")
}
