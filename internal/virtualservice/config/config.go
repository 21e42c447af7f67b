// Package config parses and validates the virtualservice-operator's ConfigMap (key config.yaml) and renders its
// VirtualService template. Everything that can be wrong with the configuration is found here, before the operator
// acts on it, so an invalid edit is reported and the last good configuration stays in force.
package config

import (
	"errors"
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"
)

// Key is the ConfigMap data key holding the configuration.
const Key = "config.yaml"

// DefaultHeaderName is the request header whose value names the developer namespace.
const DefaultHeaderName = "x-developer"

// DefaultExcludedNamespaces are system namespaces whose Services are never routed to or from.
var DefaultExcludedNamespaces = []string{"kube-system", "kube-public", "kube-node-lease", "istio-system"}

// DefaultTemplate is used when the ConfigMap has no virtualServiceTemplate. Hosts are fully qualified: a short
// name resolves relative to the VirtualService's namespace, which is easy to get wrong when the template is copied.
const DefaultTemplate = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: ${serviceName}-virtual-service
  namespace: ${defaultNamespace}
spec:
  hosts:
  - ${serviceName}.${defaultNamespace}.svc.cluster.local
  http:
  - route:
    - destination:
        host: ${serviceName}.${defaultNamespace}.svc.cluster.local
`

// Config is the validated configuration. Build it with Parse; the zero value is not usable.
type Config struct {
	// DefaultNamespace is the production namespace: its Services get a VirtualService there.
	DefaultNamespace string `json:"defaultNamespace"`
	// DeveloperNamespaces get a route each, in this order, when they have a ready Service of the same name.
	DeveloperNamespaces []string `json:"developerNamespaces"`
	// HeaderName is matched exactly against a developer namespace's name.
	HeaderName string `json:"headerName"`
	// ExcludedNamespaces may not be used as production or developer namespaces.
	ExcludedNamespaces []string `json:"excludedNamespaces"`
	// VirtualServiceTemplate gives the generated object's name, labels, annotations, hosts, other spec fields and
	// default route(s).
	VirtualServiceTemplate string `json:"virtualServiceTemplate"`
	// DeveloperRoutes limits which requests may select a developer route; by default only traffic inside the mesh.
	DeveloperRoutes DeveloperRouteScope `json:"developerRoutes"`

	template *Template
}

// Parse reads config.yaml, applies defaults and validates everything, including a trial render of the template.
// Unknown keys are errors: a misspelt key would otherwise silently fall back to a default.
func Parse(data []byte) (*Config, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%s is empty", Key)
	}
	var c Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", Key, err)
	}
	if c.HeaderName == "" {
		c.HeaderName = DefaultHeaderName
	}
	if c.ExcludedNamespaces == nil {
		c.ExcludedNamespaces = slices.Clone(DefaultExcludedNamespaces)
	}
	if c.VirtualServiceTemplate == "" {
		c.VirtualServiceTemplate = DefaultTemplate
	}
	c.DeveloperRoutes.setDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	tmpl, err := ParseTemplate(c.VirtualServiceTemplate, c.DefaultNamespace)
	if err != nil {
		return nil, fmt.Errorf("virtualServiceTemplate: %w", err)
	}
	c.template = tmpl
	return &c, nil
}

// Template is the parsed VirtualService template.
func (c *Config) Template() *Template { return c.template }

// Namespaces lists every namespace the operator reads: production first, then the developer namespaces.
func (c *Config) Namespaces() []string {
	return append([]string{c.DefaultNamespace}, c.DeveloperNamespaces...)
}

// IsExcluded reports whether ns is one of the excluded namespaces.
func (c *Config) IsExcluded(ns string) bool { return slices.Contains(c.ExcludedNamespaces, ns) }

// Equal reports whether two configurations would produce the same VirtualServices.
func (c *Config) Equal(o *Config) bool {
	if c == nil || o == nil {
		return c == o
	}
	return c.DefaultNamespace == o.DefaultNamespace && slices.Equal(c.DeveloperNamespaces, o.DeveloperNamespaces) &&
		c.HeaderName == o.HeaderName && slices.Equal(c.ExcludedNamespaces, o.ExcludedNamespaces) &&
		c.VirtualServiceTemplate == o.VirtualServiceTemplate && c.DeveloperRoutes.equal(o.DeveloperRoutes)
}

var errNoDefaultNamespace = errors.New("defaultNamespace is required")
