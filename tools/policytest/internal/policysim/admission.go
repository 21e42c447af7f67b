package policysim

import (
	"context"
	"fmt"
	"slices"

	celmatching "github.com/kyverno/kyverno/pkg/cel/matching"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiserveradmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// admissionPolicy is one of the chart's ValidatingAdmissionPolicies, compiled the way the API server compiles it
// (k8s.io/apiserver's validating plugin: variables, match conditions, validations and message expressions, with the
// authorizer library).
type admissionPolicy struct {
	policy    *admissionregistrationv1.ValidatingAdmissionPolicy
	validator validating.Validator
	// bindings enforce it: the policy acts on a request that one of them matches (none: it acts on nothing).
	bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// previewUser writes the previewed objects. Preview cannot know the writer's RBAC: the authorizer library answers yes
// to every question, as for a writer who holds the Ingress and HTTPRoute rights the chart asks for.
var previewUser = &user.DefaultInfo{Name: "policytest-preview", Groups: []string{"system:authenticated"}}

func compileAdmissionPolicy(doc string) (admissionPolicy, error) {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if err := yaml.Unmarshal([]byte(doc), p); err != nil {
		return admissionPolicy{}, err
	}
	optional := cel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	messageOptional := cel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil}
	compiler, err := cel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return admissionPolicy{}, err
	}
	variables := make([]cel.NamedExpressionAccessor, len(p.Spec.Variables))
	for i, v := range p.Spec.Variables {
		variables[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	compiler.CompileAndStoreVariables(variables, optional, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if len(p.Spec.MatchConditions) > 0 {
		conditions := make([]cel.ExpressionAccessor, len(p.Spec.MatchConditions))
		for i := range p.Spec.MatchConditions {
			conditions[i] = (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i])
		}
		matcher = matchconditions.NewMatcher(compiler.CompileCondition(conditions, optional, environment.StoredExpressions),
			p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	validations := make([]cel.ExpressionAccessor, len(p.Spec.Validations))
	messages := make([]cel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	return admissionPolicy{policy: p, validator: validating.NewValidator(
		compiler.CompileCondition(validations, optional, environment.StoredExpressions), matcher,
		compiler.CompileCondition(nil, optional, environment.StoredExpressions),
		compiler.CompileCondition(messages, messageOptional, environment.StoredExpressions),
		p.Spec.FailurePolicy, nil)}, nil
}

// bindAdmissionPolicies gives each policy the bindings that name it and deny.
func bindAdmissionPolicies(policies []admissionPolicy, docs []string) ([]admissionPolicy, error) {
	for _, doc := range docs {
		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		if err := yaml.Unmarshal([]byte(doc), b); err != nil {
			return nil, err
		}
		for i := range policies {
			if policies[i].policy.Name == b.Spec.PolicyName && slices.Contains(b.Spec.ValidationActions, admissionregistrationv1.Deny) {
				policies[i].bindings = append(policies[i].bindings, b)
			}
		}
	}
	return policies, nil
}

// refusal is the message with which the policy refuses obj's create in namespace ns, or "" when it admits it. An
// expression that fails to evaluate counts as a refusal, as the chart's failurePolicy Fail makes it.
func (a admissionPolicy) refusal(obj *unstructured.Unstructured, gvr schema.GroupVersionResource, ns *corev1.Namespace) (string, error) {
	attrs := apiserveradmission.NewAttributesRecord(obj, nil, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName(), gvr, "",
		apiserveradmission.Create, &metav1.CreateOptions{}, false, previewUser)
	matcher := celmatching.NewMatcher()
	matches, err := matcher.Match(&celmatching.MatchCriteria{Constraints: a.policy.Spec.MatchConstraints}, attrs, ns)
	if err != nil || !matches {
		return "", err
	}
	bound := false
	for _, b := range a.bindings {
		ok := b.Spec.MatchResources == nil
		if !ok {
			if ok, err = matcher.Match(&celmatching.MatchCriteria{Constraints: b.Spec.MatchResources}, attrs, ns); err != nil {
				return "", err
			}
		}
		bound = bound || ok
	}
	if !bound {
		return "", nil
	}
	versioned, err := apiserveradmission.NewVersionedAttributes(attrs, attrs.GetKind(), nil)
	if err != nil {
		return "", err
	}
	result := a.validator.Validate(context.Background(), gvr, versioned, nil, ns, celconfig.RuntimeCELCostBudget, allowEverything)
	for _, d := range result.Decisions {
		if d.Action == validating.ActionDeny || d.Evaluation == validating.EvalError {
			return fmt.Sprintf("ValidatingAdmissionPolicy %s: %s", a.policy.Name, d.Message), nil
		}
	}
	return "", nil
}

var allowEverything = authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
})
