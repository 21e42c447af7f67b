//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// testNoPreCreatedClaim: someone allowed only to create objects of the generated kind creates one under the victim
// source's generated name, with a controlling owner reference to the source, routing to their own Service. It must be
// refused (the engines would otherwise answer differently: one adopts and rewrites it, the other leaves it serving
// and reports it out of date), and the source must then generate its own object as usual.
func testNoPreCreatedClaim(k takeoverKind) func(*testing.T) {
	return func(t *testing.T) {
		dumpKyvernoLogsOnFailure(t)
		ns := newNamespace(t, "e2e-squat")
		labels := map[string]string{"app": "victim"}
		createSource(t, k, k.newSource(ns, "hold", labels))
		waitCondition(t, k, ns, "hold", "Resolved", "False", "")
		source, err := env.dyn.Resource(k.sourceGVR).Namespace(ns).Get(context.Background(), "hold", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}

		role := "create-" + k.generatedGVR.Resource
		if _, err := env.kube.RbacV1().Roles(ns).Create(context.Background(), &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: role},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{k.generatedGVR.Group}, Resources: []string{k.generatedGVR.Resource}, Verbs: []string{"create"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		squatter := newSubject(t, ns, "squatter")
		bind(t, ns, squatter.name, "Role", role)

		theirs := k.theirs(ns, virtualingress.GeneratedName("hold"))
		controller := true
		theirs.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion: source.GetAPIVersion(), Kind: source.GetKind(), Name: source.GetName(), UID: source.GetUID(),
			Controller: &controller,
		}})
		_, err = squatter.dyn.Resource(k.generatedGVR).Namespace(ns).Create(context.Background(), theirs, metav1.CreateOptions{})
		wantForbidden(t, fmt.Sprintf("a create-only subject creating %s %s controlled by %s hold", k.generated, theirs.GetName(), k.source),
			err, "only Kyverno's controllers create what virtual-ingress generates")

		// Without the squatter's object, the source generates its own once its Service appears (Ready also waits for
		// a Gateway's verdict on an HTTPRoute, which this test has no Gateway controller to give).
		svc := createService(t, ns, ccmName(t), labels)
		eventually(t, k.generated+" "+theirs.GetName()+" generated for Service "+svc.Name, func() (bool, string, error) {
			return k.routesTo(ns, theirs.GetName(), svc.Name)
		})
		generated, err := env.dyn.Resource(k.generatedGVR).Namespace(ns).Get(context.Background(), theirs.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if owner := metav1.GetControllerOfNoCopy(generated); owner == nil || owner.UID != source.GetUID() {
			t.Errorf("%s %s: controller %v, want %s hold", k.generated, theirs.GetName(), owner, k.source)
		}
	}
}
