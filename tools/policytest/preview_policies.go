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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/render"
)

// chartParts is what preview needs from a render: the ClusterPolicies and the VirtualIngress CRD.
type chartParts struct {
	policies []kyvernov1.PolicyInterface
	crd      *apiextensionsv1.CustomResourceDefinition
	crdYAML  string
}

func splitChart(docs []render.Document) (chartParts, error) {
	var parts chartParts
	var policyDocs []string
	for _, d := range docs {
		gvk := d.Object.GroupVersionKind()
		switch {
		case gvk.Group == "kyverno.io" && gvk.Kind == "ClusterPolicy":
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
	policies, err := loadPolicies(policyDocs)
	if err != nil {
		return parts, err
	}
	parts.policies = policiesForVirtualIngress(policies)
	if len(parts.policies) == 0 {
		return parts, fmt.Errorf("the chart renders no ClusterPolicy rule matching VirtualIngress")
	}
	return parts, nil
}

// loadPolicies goes through the Kyverno CLI's own loader (schema defaults, conversion) and validation, so that a
// policy preview accepts is one `kyverno test` and the admission webhook accept too.
func loadPolicies(docs []string) ([]kyvernov1.PolicyInterface, error) {
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
	return results.Policies, nil
}

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
