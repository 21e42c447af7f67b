//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// subject is a ServiceAccount of a test namespace with its own clients: what it may do is what RBAC gives it.
type subject struct {
	name string
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

func newSubject(t *testing.T, ns, name string) subject {
	t.Helper()
	cfg, err := env.cluster.ServiceAccountConfig(context.Background(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return subject{name: name, kube: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg)}
}

// bind gives the subject a ClusterRole or Role in ns, and returns once the API server's authorizer grants the role's
// first rule: it reads bindings through an informer, so a request sent right after the create may still be judged
// without it.
func bind(t *testing.T, ns, serviceAccount, kind, role string) {
	t.Helper()
	ctx := context.Background()
	_, err := env.kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: serviceAccount + "-" + strings.ToLower(kind) + "-" + role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: ns}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rules []rbacv1.PolicyRule
	if kind == "Role" {
		r, err := env.kube.RbacV1().Roles(ns).Get(ctx, role, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rules = r.Rules
	} else {
		r, err := env.kube.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rules = r.Rules
	}
	if len(rules) == 0 || len(rules[0].APIGroups) == 0 || len(rules[0].Resources) == 0 || len(rules[0].Verbs) == 0 {
		return
	}
	rule := rules[0]
	verb := rule.Verbs[0]
	if verb == rbacv1.VerbAll {
		verb = "create"
	}
	user := "system:serviceaccount:" + ns + ":" + serviceAccount
	eventually(t, user+" granted "+kind+" "+role, func() (bool, string, error) {
		review, err := env.kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: verb, Group: rule.APIGroups[0], Resource: rule.Resources[0],
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, "", err
		}
		return review.Status.Allowed, review.Status.Reason, nil
	})
}

func (s subject) createVirtualIngress(vi *unstructured.Unstructured) error {
	_, err := s.dyn.Resource(virtualIngressGVR).Namespace(vi.GetNamespace()).Create(context.Background(), vi, metav1.CreateOptions{})
	return err
}

func wantForbidden(t *testing.T, what string, err error, message string) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("%s: allowed, want it refused", what)
	case !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err):
		t.Fatalf("%s: %v, want it refused", what, err)
	case !strings.Contains(err.Error(), message):
		t.Fatalf("%s: refused with %q, want a message containing %q", what, err, message)
	}
}

// testWriteRights: writing a VirtualIngress never gives more than writing an Ingress. A subject with VirtualIngress
// and Service rights only gets no Ingress (Kyverno would create it with its own rights); a subject with the built-in
// edit role writes VirtualIngresses through the chart's aggregated role, but not the annotations that inject
// ingress-controller configuration; and outside the namespaces the chart serves nobody writes status.
func testWriteRights(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-rights")
	service := ccmName(t)
	createService(t, ns, service, relayLabels())

	_, err := env.kube.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "virtualingresses-only"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"virtual-ingress.io"}, Resources: []string{"virtualingresses"}, Verbs: []string{"*"}},
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mallory := newSubject(t, ns, "mallory")
	bind(t, ns, "mallory", "Role", "virtualingresses-only")
	alice := newSubject(t, ns, "alice")
	bind(t, ns, "alice", "ClusterRole", "edit")

	// The premise: mallory may not write Ingresses.
	_, err = mallory.kube.NetworkingV1().Ingresses(ns).Create(ctx, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "direct"},
		Spec:       networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: service, Port: networkingv1.ServiceBackendPort{Number: 80}}}},
	}, metav1.CreateOptions{})
	wantForbidden(t, "mallory creating an Ingress", err, "forbidden")

	bank := virtualingress.New(ns, "bank", map[string]any{
		"rules": []any{virtualingress.Rule("bank.example.com", virtualingress.Path("/", virtualingress.SelectorBackend(relayLabels(), 80)))},
	})
	err = mallory.createVirtualIngress(bank)
	wantForbidden(t, "mallory creating a VirtualIngress", err, "may not create Ingresses in namespace "+ns)
	assertNoIngress(t, ns, virtualingress.GeneratedName("bank"))

	// alice's edit role reaches VirtualIngresses through aggregation (kube-controller-manager updates the role).
	// Annotation values are data: braces and dollars reach the Ingress as written, never evaluated by a policy.
	verbatim := map[string]string{
		"example.com/note":  "x-{{ request.object.metadata.name }}-{{ request.userInfo.username }}",
		"example.com/price": "${PRICE} costs {{ $ }} and \\{{ escaped }}",
	}
	coderVI := virtualIngress(ns, "coder", virtualingress.CoderSpec(relayLabels()))
	annotations := coderVI.GetAnnotations()
	for k, v := range verbatim {
		annotations[k] = v
	}
	coderVI.SetAnnotations(annotations)
	eventually(t, "the edit role to include VirtualIngresses", func() (bool, string, error) {
		err := alice.createVirtualIngress(coderVI)
		return err == nil, errString(err), nil
	})
	ing := waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), service)
	for k, v := range verbatim {
		if got := ing.Annotations[k]; got != v {
			t.Errorf("Ingress annotation %s = %q, want it copied verbatim: %q", k, got, v)
		}
	}

	// Deleting a VirtualIngress deletes its Ingress: it needs Ingress delete too.
	err = mallory.dyn.Resource(virtualIngressGVR).Namespace(ns).Delete(ctx, "coder", metav1.DeleteOptions{})
	wantForbidden(t, "mallory deleting alice's VirtualIngress", err, "may not delete Ingresses in namespace "+ns)

	snippet := virtualingress.New(ns, "snippet", virtualingress.CoderSpec(relayLabels()))
	snippet.SetAnnotations(map[string]string{"nginx.ingress.kubernetes.io/server-snippet": "location /admin { allow all; }"})
	wantForbidden(t, "alice creating a VirtualIngress with a server snippet", alice.createVirtualIngress(snippet),
		"annotation nginx.ingress.kubernetes.io/server-snippet is not allowed on a VirtualIngress")
	// The status controller and Kyverno write the VirtualIngress's status meanwhile: an update refused as a conflict,
	// before admission saw it, is read again and retried, as kubectl edit would be.
	waitReady(t, ns, "coder", "True", "IngressUpToDate")
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		coder, err := alice.dyn.Resource(virtualIngressGVR).Namespace(ns).Get(ctx, "coder", metav1.GetOptions{})
		if err != nil {
			return err
		}
		annotations := coder.GetAnnotations()
		annotations["nginx.ingress.kubernetes.io/configuration-snippet"] = "more_set_headers \"X: y\";"
		coder.SetAnnotations(annotations)
		_, err = alice.dyn.Resource(virtualIngressGVR).Namespace(ns).Update(ctx, coder, metav1.UpdateOptions{})
		return err
	})
	wantForbidden(t, "alice adding a configuration snippet", err,
		"annotation nginx.ingress.kubernetes.io/configuration-snippet is not allowed on a VirtualIngress")
}

// testStatusOutsideServedNamespaces: the generate policies act in every namespace, the resolve policies only in the
// ones the chart serves; elsewhere a client-written status.ingress must never become an Ingress.
func testStatusOutsideServedNamespaces(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ctx := context.Background()
	const ns = "kube-public" // excluded by the chart's default values
	forged := virtualingress.New(ns, "forged", virtualingress.CoderSpec(relayLabels()))
	forged.Object["status"] = map[string]any{"ingress": map[string]any{
		"name": virtualingress.GeneratedName("forged"),
		"spec": map[string]any{"ingressClassName": "public", "rules": []any{virtualingress.Rule("bank.example.com",
			virtualingress.Path("/", virtualingress.NamedBackend("anything", 80)))}},
	}}
	_, err := env.dyn.Resource(virtualIngressGVR).Namespace(ns).Create(ctx, forged, metav1.CreateOptions{})
	wantForbidden(t, "creating a VirtualIngress with a status outside the served namespaces", err,
		"status is written by the virtual-ingress policies, which do not act in this namespace")

	plain := virtualingress.New(ns, "forged", virtualingress.CoderSpec(relayLabels()))
	created, err := env.dyn.Resource(virtualIngressGVR).Namespace(ns).Create(ctx, plain, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.dyn.Resource(virtualIngressGVR).Namespace(ns).Delete(context.Background(), "forged", metav1.DeleteOptions{})
	})
	created.Object["status"] = forged.Object["status"]
	_, err = env.dyn.Resource(virtualIngressGVR).Namespace(ns).Update(ctx, created, metav1.UpdateOptions{})
	wantForbidden(t, "adding a status outside the served namespaces", err,
		"status is written by the virtual-ingress policies, which do not act in this namespace")
	assertNoIngress(t, ns, virtualingress.GeneratedName("forged"))
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// testStatusControllerCannotBringItsOwnIngress: the status controller's report of Ready is stored without resolution,
// but only when it changes nothing else. With the controller's own token (which has no Ingress rights) and its own
// kind of write (a merge patch of status, based on the read's resourceVersion), a report that also rewrites
// status.ingress is resolved like any client's write: the stored status.ingress, the one the generate policy copies,
// stays the policies'.
func testStatusControllerCannotBringItsOwnIngress(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ctx := context.Background()
	ns := newNamespace(t, "e2e-report")
	resolvedCoder(t, ns)
	waitReady(t, ns, "coder", "True", "IngressUpToDate")
	cfg, err := env.cluster.ServiceAccountConfig(ctx, releaseNamespace, controllerServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	controllerClient := dynamic.NewForConfigOrDie(cfg).Resource(virtualIngressGVR).Namespace(ns)

	var stored *unstructured.Unstructured
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vi, err := controllerClient.Get(ctx, "coder", metav1.GetOptions{})
		if err != nil {
			return err
		}
		ingress, _, _ := unstructured.NestedMap(vi.Object, "status", "ingress")
		rules, _, _ := unstructured.NestedSlice(ingress, "spec", "rules")
		if len(rules) == 0 {
			t.Fatalf("status.ingress.spec has no rules: %v", vi.Object["status"])
		}
		rules[0].(map[string]any)["host"] = "bank.example.com"
		if err := unstructured.SetNestedSlice(ingress, rules, "spec", "rules"); err != nil {
			t.Fatal(err)
		}
		conditions, _, _ := unstructured.NestedSlice(vi.Object, "status", "conditions")
		for _, c := range conditions {
			if c := c.(map[string]any); c["type"] == "Ready" {
				c["message"] = "a report that brings its own Ingress"
			}
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": vi.GetResourceVersion()},
			"status":   map[string]any{"conditions": conditions, "ingress": ingress},
		})
		if err != nil {
			t.Fatal(err)
		}
		stored, err = controllerClient.Patch(ctx, "coder", types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("the status controller's write of status: %v", err)
	}
	rules, _, _ := unstructured.NestedSlice(stored.Object, "status", "ingress", "spec", "rules")
	if len(rules) == 0 {
		t.Fatalf("stored status.ingress.spec has no rules after the controller's write: %v", stored.Object["status"])
	}
	if host := rules[0].(map[string]any)["host"]; host != "coder.enigma.vgijssel.nl" {
		t.Fatalf("stored status.ingress.spec.rules[0].host = %v after the controller's write, want the policies' coder.enigma.vgijssel.nl", host)
	}
}
