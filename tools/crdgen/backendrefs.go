package main

import (
	"fmt"
	"maps"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/gatewayapi"
)

// maxSelectingBackendRefs caps the label-selected backendRefs of one VirtualHTTPRoute, as the VirtualIngress CRD
// caps its matchLabels backends and for the same reason: each costs a comparison with every Service of the
// namespace on each write and each Service event, and the CEL engine must stay inside Kyverno's cost limit.
const maxSelectingBackendRefs = 32

// virtualRouteSpec is HTTPRoute's spec schema with backendRefs that may select their Service by labels
// (matchLabels, taken from the VirtualIngress CRD) and name its port. Everything else, including every upstream
// validation rule, is HTTPRoute's own.
func virtualRouteSpec(spec apiextensionsv1.JSONSchemaProps, vi *apiextensionsv1.JSONSchemaProps) (apiextensionsv1.JSONSchemaProps, error) {
	rules, ok := spec.Properties["rules"]
	if !ok || rules.Items == nil || rules.Items.Schema == nil {
		return spec, fmt.Errorf("HTTPRoute spec has no rules[]")
	}
	rule := *rules.Items.Schema
	refs, ok := rule.Properties["backendRefs"]
	if !ok || refs.Items == nil || refs.Items.Schema == nil {
		return spec, fmt.Errorf("HTTPRoute spec has no rules[].backendRefs[]")
	}
	matchLabels, ok := nested(vi, "spec", "defaultBackend", "service", "matchLabels")
	if !ok {
		return spec, fmt.Errorf("%s: no spec.defaultBackend.service.matchLabels", virtualIngressPath)
	}
	ref, err := selectingBackendRef(*refs.Items.Schema, matchLabels)
	if err != nil {
		return spec, err
	}
	refs.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &ref}
	rule.Properties = maps.Clone(rule.Properties)
	rule.Properties["backendRefs"] = refs
	rules.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &rule}
	spec.Properties = maps.Clone(spec.Properties)
	spec.Properties["rules"] = rules

	spec.Description = "gateway.networking.k8s.io/v1 HTTPRouteSpec (Gateway API " + gatewayapi.Version + "), except " +
		"that a Service backendRef may select its Service by matchLabels instead of name, and then give its port by name."
	spec.XValidations = append(slices.Clone(spec.XValidations), apiextensionsv1.ValidationRule{
		Rule: "!has(self.rules) || self.rules.map(r, has(r.backendRefs) ? r.backendRefs.filter(b, has(b.matchLabels)).size() : 0).sum() <= " +
			fmt.Sprint(maxSelectingBackendRefs),
		Message: fmt.Sprintf("at most %d backendRefs may select their Service by matchLabels; split the VirtualHTTPRoute",
			maxSelectingBackendRefs),
	})
	return spec, nil
}

// selectingBackendRef turns HTTPBackendRef's schema into one where name or matchLabels picks the Service.
func selectingBackendRef(ref apiextensionsv1.JSONSchemaProps, matchLabels apiextensionsv1.JSONSchemaProps) (apiextensionsv1.JSONSchemaProps, error) {
	if _, ok := ref.Properties["port"]; !ok {
		return ref, fmt.Errorf("HTTPBackendRef has no port")
	}
	ref.Required = slices.DeleteFunc(slices.Clone(ref.Required), func(f string) bool { return f == "name" })
	ref.Properties = maps.Clone(ref.Properties)

	name := ref.Properties["name"]
	name.Description = "Name of the referent. Exactly one of name or matchLabels; copied to the HTTPRoute untouched."
	ref.Properties["name"] = name

	matchLabels.Description = "Labels a Service of the VirtualHTTPRoute's namespace must carry (all of them, like a " +
		"label selector's matchLabels). The generated HTTPRoute names the Service that matches."
	ref.Properties["matchLabels"] = matchLabels

	ref.Properties["port"] = apiextensionsv1.JSONSchemaProps{
		Description: "Port of the Service: its number, or (with matchLabels) the name of one of the selected Service's " +
			"ports, which the generated HTTPRoute gets as a number. Required for a Service.",
		XIntOrString: true,
		AnyOf:        []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}},
		MaxLength:    ptr.To[int64](15),
		XValidations: apiextensionsv1.ValidationRules{{
			Rule:    "type(self) == int ? self >= 1 && self <= 65535 : true",
			Message: "port must be between 1 and 65535",
		}, {
			Rule: "type(self) == string ? self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && self.matches('[a-z]') && " +
				"!self.contains('--') : true",
			Message: "a named port must be a Service port name (IANA_SVC_NAME): lower-case alphanumerics and '-', at " +
				"least one letter, no '--', not starting or ending with '-'",
		}},
	}

	ref.XValidations = append(slices.Clone(ref.XValidations),
		apiextensionsv1.ValidationRule{
			Rule:    "has(self.name) != has(self.matchLabels)",
			Message: "exactly one of name or matchLabels must be set",
		},
		apiextensionsv1.ValidationRule{
			Rule: "!has(self.matchLabels) || (size(self.group) == 0 && self.kind == 'Service' && !has(self.namespace))",
			Message: "matchLabels selects a Service of the VirtualHTTPRoute's own namespace: group must be empty, kind " +
				"Service and namespace unset",
		},
		apiextensionsv1.ValidationRule{
			Rule: "!has(self.port) || type(self.port) == int || has(self.matchLabels)",
			Message: "port may be a name only with matchLabels (the HTTPRoute needs a number, read from the selected " +
				"Service)",
		},
	)
	return ref, nil
}

// nested walks properties by name.
func nested(s *apiextensionsv1.JSONSchemaProps, path ...string) (apiextensionsv1.JSONSchemaProps, bool) {
	cur := *s
	for _, p := range path {
		next, ok := cur.Properties[p]
		if !ok {
			return apiextensionsv1.JSONSchemaProps{}, false
		}
		cur = next
	}
	return cur, true
}
