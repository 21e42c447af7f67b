package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/policy"
	"github.com/kyverno/kyverno/pkg/config"
	policyvalidation "github.com/kyverno/kyverno/pkg/validation/policy"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kyvernosim"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

// chartParts is what preview needs from a render: the policies of one engine that act on VirtualIngresses (the
// ClusterPolicies, or the CEL MutatingPolicies and GeneratingPolicies) and the VirtualIngress CRD.
type chartParts struct {
	policies []kyvernov1.PolicyInterface
	cel      kyvernosim.CELPolicies
	crd      *apiextensionsv1.CustomResourceDefinition
	crdYAML  string
}

// engine names the policy engine the render holds, as the chart's policy.engine value does.
func (p chartParts) engine() string {
	if len(p.policies) > 0 {
		return policyengine.ClusterPolicy
	}
	return policyengine.GeneratingPolicy
}

func splitChart(docs []render.Document) (chartParts, error) {
	var parts chartParts
	var policyDocs []string
	for _, d := range docs {
		gvk := d.Object.GroupVersionKind()
		switch {
		case gvk.Group == "kyverno.io" && gvk.Kind == "ClusterPolicy",
			gvk.Group == "policies.kyverno.io" && (gvk.Kind == "MutatingPolicy" || gvk.Kind == "GeneratingPolicy"):
			policyDocs = append(policyDocs, d.YAML)
		case gvk.Kind == "CustomResourceDefinition" && d.Object.GetName() == "virtualingresses.virtual-ingress.io":
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal([]byte(d.YAML), crd); err != nil {
				return parts, fmt.Errorf("%s: %w", d.Source, err)
			}
			parts.crd, parts.crdYAML = crd, d.YAML
		}
	}
	if parts.crd == nil {
		return parts, fmt.Errorf("the chart renders no CustomResourceDefinition virtualingresses.virtual-ingress.io")
	}
	loaded, err := loadPolicies(policyDocs)
	if err != nil {
		return parts, err
	}
	parts.policies = policiesForVirtualIngress(loaded.Policies)
	for _, m := range loaded.MutatingPolicies {
		if celMatchesVirtualIngresses(m.GetSpec().MatchConstraints) {
			parts.cel.Mutating = append(parts.cel.Mutating, m)
		}
	}
	for _, g := range loaded.GeneratingPolicies {
		if celMatchesVirtualIngresses(g.GetSpec().MatchConstraints) {
			parts.cel.Generating = append(parts.cel.Generating, g)
		}
	}
	celCount := len(parts.cel.Mutating) + len(parts.cel.Generating)
	switch {
	case len(parts.policies) == 0 && celCount == 0:
		return parts, fmt.Errorf("the chart renders no ClusterPolicy rule, MutatingPolicy or GeneratingPolicy matching VirtualIngress")
	case len(parts.policies) > 0 && celCount > 0:
		return parts, fmt.Errorf("the chart renders both ClusterPolicies and CEL policies for VirtualIngresses; preview one engine at a time")
	}
	return parts, nil
}

// loadPolicies goes through the Kyverno CLI's own loader (schema defaults, conversion) and validation, so that a
// policy preview accepts is one `kyverno test` and the admission webhook accept too.
func loadPolicies(docs []string) (*policy.LoaderResults, error) {
	f, err := os.CreateTemp("", "policytest-policies-*.yaml")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	_, werr := f.WriteString(strings.Join(docs, "---\n"))
	if err := errors.Join(werr, f.Close()); err != nil {
		return nil, fmt.Errorf("writing policies to %s: %w", f.Name(), err)
	}
	results, err := policy.Load(nil, "", f.Name())
	if err != nil {
		return nil, fmt.Errorf("loading the chart's policies: %w", err)
	}
	for _, e := range results.NonFatalErrors {
		return nil, fmt.Errorf("loading the chart's policies: %w", e.Error)
	}
	sa := config.KyvernoUserName(config.KyvernoServiceAccountName())
	for _, p := range results.Policies {
		if _, err := policyvalidation.Validate(p, nil, nil, true, sa, sa); err != nil {
			return nil, fmt.Errorf("policy %s is invalid: %w", p.GetName(), err)
		}
	}
	// CEL policies are compiled (and rejected on a CEL error) by the engines themselves, as in `kyverno test`.
	return results, nil
}

// celMatchesVirtualIngresses: the CEL policies that admission of a VirtualIngress runs (not the service-events
// MutatingPolicy, which matches Services).
func celMatchesVirtualIngresses(m *admissionregistrationv1.MatchResources) bool {
	if m == nil {
		return false
	}
	for _, r := range m.ResourceRules {
		for _, res := range r.Resources {
			if res == virtualIngressResource || res == "*" {
				return true
			}
		}
	}
	return false
}

const virtualIngressResource = "virtualingresses"

// policiesForVirtualIngress keeps only the rules that match VirtualIngresses: the admission of one is what preview
// simulates. Rules on other kinds (the Service-triggered mutate-existing rule) are dropped, and so are policies
// left without rules.
func policiesForVirtualIngress(policies []kyvernov1.PolicyInterface) []kyvernov1.PolicyInterface {
	var kept []kyvernov1.PolicyInterface
	for _, p := range policies {
		p = p.CreateDeepCopy()
		spec := p.GetSpec()
		var rules []kyvernov1.Rule
		for _, r := range spec.Rules {
			if matchesVirtualIngress(r.MatchResources) {
				rules = append(rules, r)
			}
		}
		if len(rules) == 0 {
			continue
		}
		spec.Rules = rules
		kept = append(kept, p)
	}
	return kept
}

func matchesVirtualIngress(m kyvernov1.MatchResources) bool {
	descriptions := []kyvernov1.ResourceDescription{m.ResourceDescription}
	for _, f := range append(append(kyvernov1.ResourceFilters{}, m.Any...), m.All...) {
		descriptions = append(descriptions, f.ResourceDescription)
	}
	for _, d := range descriptions {
		for _, k := range d.Kinds {
			// Kinds are "Kind", "group/version/Kind" or "group/*/Kind"; a subresource ("Kind/status") is not the
			// object itself.
			parts := strings.Split(k, "/")
			if last := parts[len(parts)-1]; last == virtualIngressGVK.Kind || last == "*" {
				return true
			}
		}
	}
	return false
}
