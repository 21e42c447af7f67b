package policysim

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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kyvernosim"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

// ChartParts is what preview and compare need from a render: for each source kind, the policies of one engine that
// act on a write of it (the ClusterPolicies, or the CEL MutatingPolicies and GeneratingPolicies) and its CRD. A kind
// the values leave without policies has an entry with its CRD only.
type ChartParts struct {
	sources map[schema.GroupVersionKind]sourceParts
	// admission are the chart's ValidatingAdmissionPolicies, which the API server runs before any Kyverno policy.
	admission []admissionPolicy
}

type sourceParts struct {
	policies []kyvernov1.PolicyInterface
	cel      kyvernosim.CELPolicies
	crd      *apiextensionsv1.CustomResourceDefinition
	crdYAML  string
}

func (p sourceParts) celCount() int { return len(p.cel.Mutating) + len(p.cel.Generating) }

func (p sourceParts) hasPolicies() bool { return len(p.policies) > 0 || p.celCount() > 0 }

// engine names the policy engine the render holds, as the chart's policy.engine value does.
func (p ChartParts) engine() string {
	for _, s := range p.sources {
		if len(s.policies) > 0 {
			return policyengine.ClusterPolicy
		}
	}
	return policyengine.GeneratingPolicy
}

// crds are the source kinds' CRDs, for the simulated cluster to serve.
func (p ChartParts) crds() []*apiextensionsv1.CustomResourceDefinition {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, k := range sourceKinds {
		if s := p.sources[k.gvk]; s.crd != nil {
			crds = append(crds, s.crd)
		}
	}
	return crds
}

func splitChart(docs []render.Document) (ChartParts, error) {
	parts := ChartParts{sources: map[schema.GroupVersionKind]sourceParts{}}
	crds := map[string]render.Document{}
	var policyDocs, bindingDocs []string
	for _, d := range docs {
		gvk := d.Object.GroupVersionKind()
		switch {
		case gvk.Group == "kyverno.io" && gvk.Kind == "ClusterPolicy",
			gvk.Group == "policies.kyverno.io" && (gvk.Kind == "MutatingPolicy" || gvk.Kind == "GeneratingPolicy"):
			policyDocs = append(policyDocs, d.YAML)
		case gvk.Kind == "CustomResourceDefinition":
			crds[d.Object.GetName()] = d
		case gvk.Group == "admissionregistration.k8s.io" && gvk.Kind == "ValidatingAdmissionPolicy":
			a, err := compileAdmissionPolicy(d.YAML)
			if err != nil {
				return parts, fmt.Errorf("%s: %w", d.Source, err)
			}
			parts.admission = append(parts.admission, a)
		case gvk.Group == "admissionregistration.k8s.io" && gvk.Kind == "ValidatingAdmissionPolicyBinding":
			bindingDocs = append(bindingDocs, d.YAML)
		}
	}
	loaded, err := loadPolicies(policyDocs)
	if err != nil {
		return parts, err
	}
	if parts.admission, err = bindAdmissionPolicies(parts.admission, bindingDocs); err != nil {
		return parts, err
	}
	for _, k := range sourceKinds {
		var s sourceParts
		if d, ok := crds[k.crdName()]; ok {
			s.crd, s.crdYAML = &apiextensionsv1.CustomResourceDefinition{}, d.YAML
			if err := yaml.Unmarshal([]byte(d.YAML), s.crd); err != nil {
				return parts, fmt.Errorf("%s: %w", d.Source, err)
			}
		}
		s.policies = policiesForKind(loaded.Policies, k.gvk.Kind)
		for _, m := range loaded.MutatingPolicies {
			if celMatches(m.GetSpec().MatchConstraints, k.resource) {
				s.cel.Mutating = append(s.cel.Mutating, m)
			}
		}
		for _, g := range loaded.GeneratingPolicies {
			if celMatches(g.GetSpec().MatchConstraints, k.resource) {
				s.cel.Generating = append(s.cel.Generating, g)
			}
		}
		if len(s.policies) > 0 && s.celCount() > 0 {
			return parts, fmt.Errorf("the chart renders both ClusterPolicies and CEL policies for %ss; preview one engine at a time", k.gvk.Kind)
		}
		parts.sources[k.gvk] = s
	}
	// The VirtualIngress policies render whatever the values: a render without them is not of this chart's policies.
	if _, err := parts.forKind(virtualIngressGVK); err != nil {
		return parts, err
	}
	return parts, nil
}

// forKind is what a write of an object of gvk goes through. A render without the kind's CRD or policies is an error:
// the write could not be checked against the schema, or would pass through nothing.
func (p ChartParts) forKind(gvk schema.GroupVersionKind) (sourceParts, error) {
	for _, k := range sourceKinds {
		if k.gvk != gvk {
			continue
		}
		s := p.sources[gvk]
		switch {
		case s.crd == nil:
			return s, fmt.Errorf("the chart renders no CustomResourceDefinition %s", k.crdName())
		case !s.hasPolicies() && k.enabledBy != nil:
			return s, fmt.Errorf("the chart renders no ClusterPolicy rule, MutatingPolicy or GeneratingPolicy matching %s (%s renders them)", gvk.Kind, k.enabledByText())
		case !s.hasPolicies():
			return s, fmt.Errorf("the chart renders no ClusterPolicy rule, MutatingPolicy or GeneratingPolicy matching %s", gvk.Kind)
		}
		return s, nil
	}
	return sourceParts{}, fmt.Errorf("%s is not a kind the chart's policies generate from", gvk)
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

// celMatches tells the CEL policies that admission of a resource runs (not the service-events MutatingPolicies,
// which match Services).
func celMatches(m *admissionregistrationv1.MatchResources, resource string) bool {
	if m == nil {
		return false
	}
	for _, r := range m.ResourceRules {
		for _, res := range r.Resources {
			if res == resource || res == "*" {
				return true
			}
		}
	}
	return false
}

// policiesForKind keeps only the rules that match kind: the admission of one object is what preview and compare
// simulate. Rules on other kinds (the Service-triggered mutate-existing rules, the other source kind's) are dropped,
// and so are policies left without rules.
func policiesForKind(policies []kyvernov1.PolicyInterface, kind string) []kyvernov1.PolicyInterface {
	var kept []kyvernov1.PolicyInterface
	for _, p := range policies {
		p = p.CreateDeepCopy()
		spec := p.GetSpec()
		var rules []kyvernov1.Rule
		for _, r := range spec.Rules {
			if matchesKind(r.MatchResources, kind) {
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

func matchesKind(m kyvernov1.MatchResources, kind string) bool {
	descriptions := []kyvernov1.ResourceDescription{m.ResourceDescription}
	for _, f := range append(append(kyvernov1.ResourceFilters{}, m.Any...), m.All...) {
		descriptions = append(descriptions, f.ResourceDescription)
	}
	for _, d := range descriptions {
		for _, k := range d.Kinds {
			// Kinds are "Kind", "group/version/Kind" or "group/*/Kind"; a subresource ("Kind/status") is not the
			// object itself.
			parts := strings.Split(k, "/")
			if last := parts[len(parts)-1]; last == kind || last == "*" {
				return true
			}
		}
	}
	return false
}
