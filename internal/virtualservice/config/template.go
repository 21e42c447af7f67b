package config

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Group and Kind of what the template may describe. The version is the operator's --istio-api-version: the
// operator watches one version, so a version in the template is accepted but not used.
const (
	IstioGroup = "networking.istio.io"
	Kind       = "VirtualService"
)

var placeholder = regexp.MustCompile(`\$\{([^}]*)\}`)

var knownPlaceholders = map[string]bool{"serviceName": true, "defaultNamespace": true}

// Before parsing, each placeholder becomes a token that YAML reads as part of a plain string in any context: "${"
// itself is not, since "{" opens a flow mapping inside "[${serviceName}]". Render replaces the tokens in the strings
// of the parsed template.
var toTokens = strings.NewReplacer("${serviceName}", serviceNameToken, "${defaultNamespace}", defaultNamespaceToken)

const (
	serviceNameToken      = "__virtualservice_operator_serviceName__"
	defaultNamespaceToken = "__virtualservice_operator_defaultNamespace__"
)

// Template is a validated virtualServiceTemplate, parsed once.
type Template struct {
	doc              map[string]any
	defaultNamespace string
}

// Rendered is the template for one production Service.
type Rendered struct {
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	// Hosts is spec.hosts.
	Hosts []any
	// DefaultRoutes is spec.http: the routes that go after the developer routes.
	DefaultRoutes []map[string]any
	// ExtraSpec is every other spec field (gateways, exportTo, tcp, ...), applied as given.
	ExtraSpec map[string]any
}

// ParseTemplate checks text by rendering it for two sample Service names: it must give a valid VirtualService whose
// name depends on the Service name (otherwise every Service would write the same object).
func ParseTemplate(text, defaultNamespace string) (*Template, error) {
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		if !knownPlaceholders[m[1]] {
			return nil, fmt.Errorf("unknown placeholder %s (known: ${serviceName}, ${defaultNamespace})", m[0])
		}
	}
	js, err := yaml.YAMLToJSON([]byte(toTokens.Replace(text)))
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var doc map[string]any
	// apimachinery's json keeps integers as int64, as in objects read from the API server, so that rendered and
	// live fields compare equal.
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, fmt.Errorf("not a YAML mapping: %w", err)
	}
	t := &Template{doc: doc, defaultNamespace: defaultNamespace}
	a, err := t.Render("sample-a")
	if err != nil {
		return nil, err
	}
	b, err := t.Render("sample-b")
	if err != nil {
		return nil, err
	}
	if a.Name == b.Name {
		return nil, fmt.Errorf("metadata.name %q does not contain ${serviceName}: every Service would share one VirtualService", a.Name)
	}
	return t, nil
}

// Render substitutes the placeholders into the string keys and values of the parsed template and decodes the
// result. Substituting into the YAML text instead would let a Service name change a value's type: YAML reads a
// Service named no, on, y or null as false, true or null.
func (t *Template) Render(serviceName string) (*Rendered, error) {
	r := strings.NewReplacer(serviceNameToken, serviceName, defaultNamespaceToken, t.defaultNamespace)
	doc, _ := substitute(t.doc, r).(map[string]any)
	return t.decode(doc)
}

// substitute returns a copy of v with r applied to every string in it, map keys included; the parsed template is
// shared by every Service and never changed.
func substitute(v any, r *strings.Replacer) any {
	switch v := v.(type) {
	case string:
		return r.Replace(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[r.Replace(k)] = substitute(x, r)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = substitute(x, r)
		}
		return out
	default:
		return v
	}
}

func (t *Template) decode(doc map[string]any) (*Rendered, error) {
	for k, v := range doc {
		switch k {
		case "apiVersion":
			if s, _ := v.(string); !strings.HasPrefix(s, IstioGroup+"/") {
				return nil, fmt.Errorf("apiVersion %v is not in group %s", v, IstioGroup)
			}
		case "kind":
			if v != Kind {
				return nil, fmt.Errorf("kind %v is not %s", v, Kind)
			}
		case "metadata", "spec":
		default:
			return nil, fmt.Errorf("unexpected top-level field %q (allowed: apiVersion, kind, metadata, spec)", k)
		}
	}
	r := &Rendered{}
	if err := t.decodeMetadata(doc["metadata"], r); err != nil {
		return nil, err
	}
	if err := decodeSpec(doc["spec"], r); err != nil {
		return nil, err
	}
	return r, nil
}

func (t *Template) decodeMetadata(v any, r *Rendered) error {
	meta, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("metadata must be a mapping")
	}
	var err error
	for k, v := range meta {
		switch k {
		case "name":
			r.Name, _ = v.(string)
		case "namespace":
			if v != t.defaultNamespace {
				return fmt.Errorf("metadata.namespace %v must be the defaultNamespace %q (or ${defaultNamespace})", v, t.defaultNamespace)
			}
		case "labels":
			if r.Labels, err = stringMap("metadata.labels", v); err != nil {
				return err
			}
		case "annotations":
			if r.Annotations, err = stringMap("metadata.annotations", v); err != nil {
				return err
			}
		default:
			return fmt.Errorf("metadata.%s is not supported in the template (allowed: name, namespace, labels, annotations)", k)
		}
	}
	if msgs := validation.IsDNS1123Subdomain(r.Name); len(msgs) > 0 {
		return fmt.Errorf("metadata.name %q is not a valid name: %s", r.Name, strings.Join(msgs, "; "))
	}
	for k := range r.Labels {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			return fmt.Errorf("metadata.labels: key %q: %s", k, strings.Join(msgs, "; "))
		}
	}
	for k, v := range r.Labels {
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			return fmt.Errorf("metadata.labels[%s]: value %q: %s", k, v, strings.Join(msgs, "; "))
		}
	}
	return nil
}

func decodeSpec(v any, r *Rendered) error {
	spec, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("spec must be a mapping")
	}
	r.ExtraSpec = map[string]any{}
	for k, v := range spec {
		switch k {
		case "hosts":
			hosts, ok := v.([]any)
			if !ok || len(hosts) == 0 {
				return fmt.Errorf("spec.hosts must be a non-empty list")
			}
			for _, h := range hosts {
				if s, ok := h.(string); !ok || s == "" {
					return fmt.Errorf("spec.hosts: %v is not a host name", h)
				}
			}
			r.Hosts = hosts
		case "http":
			routes, ok := v.([]any)
			if !ok || len(routes) == 0 {
				return fmt.Errorf("spec.http must be a non-empty list: its routes are the default (production) route, put after the developer routes")
			}
			for i, route := range routes {
				m, ok := route.(map[string]any)
				if !ok {
					return fmt.Errorf("spec.http[%d] must be a mapping", i)
				}
				r.DefaultRoutes = append(r.DefaultRoutes, m)
			}
		default:
			r.ExtraSpec[k] = v
		}
	}
	if r.Hosts == nil {
		return fmt.Errorf("spec.hosts is required")
	}
	if r.DefaultRoutes == nil {
		return fmt.Errorf("spec.http is required: its routes are the default (production) route")
	}
	return nil
}

func stringMap(field string, v any) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a mapping", field)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s[%s] must be a string, got %v", field, k, v)
		}
		out[k] = s
	}
	return out, nil
}
