//go:build e2e

package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

// TestRenamedClusterLeavesNoService: the default Service name follows spec.clusterName; after a rename the Service
// of the old name, and the load-balancer address it held, are gone, and the new one serves.
func TestRenamedClusterLeavesNoService(t *testing.T) {
	ctx := context.Background()
	c := mgmtClient(t)
	if err := startMetalLB(ctx); err != nil {
		t.Fatal(err)
	}
	const name = "renamed"
	key := types.NamespacedName{Namespace: clustersNS, Name: name}
	createAppsIngress(t, name, poolA, func(ai *v1alpha1.AppsIngress) { ai.Spec.ClusterName = "before" })
	t.Cleanup(func() { deleteAndWait(t, key) })
	waitFor(t, c, key, "Ready", time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))
	if _, err := hostedService(t, "before-apps"); err != nil {
		t.Fatal(err)
	}

	patch(t, c, key, func(ai *v1alpha1.AppsIngress) { ai.Spec.ClusterName = "after" })
	waitFor(t, c, key, "Ready under the new name", time.Minute, phaseIs(v1alpha1.PhaseReady, "Ready"))
	if _, err := hostedService(t, "after-apps"); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := hostedService(t, "before-apps")
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatal("the Service of the old cluster name is still there, holding its address")
	}
	waitDNS(t, vlanClient, "x.apps.before."+baseDomain, nil)
	noSyncErrors(t)
}

// TestLoadBalancerClassNamesTheController: the Service carries the class the AppsIngress names, so a MetalLB without
// that class (the one these tests run) leaves it alone; the class cannot change afterwards, as a Service's cannot.
func TestLoadBalancerClassNamesTheController(t *testing.T) {
	ctx := context.Background()
	c := mgmtClient(t)
	if err := startMetalLB(ctx); err != nil {
		t.Fatal(err)
	}
	const name = "classy"
	key := types.NamespacedName{Namespace: clustersNS, Name: name}
	createAppsIngress(t, name, poolA, func(ai *v1alpha1.AppsIngress) {
		ai.Spec.Service.LoadBalancerClass = ptr.To("example.com/vlan-lb")
	})
	t.Cleanup(func() { deleteAndWait(t, key) })
	waitFor(t, c, key, "Pending/ExternalIPPending", time.Minute, phaseIs(v1alpha1.PhasePending, "ExternalIPPending"))
	svc, err := hostedService(t, name+"-apps")
	if err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(svc.Spec.LoadBalancerClass, ""); got != "example.com/vlan-lb" {
		t.Fatalf("Service loadBalancerClass %q, want example.com/vlan-lb", got)
	}
	if len(svc.Status.LoadBalancer.Ingress) != 0 {
		t.Fatalf("a MetalLB of no class served a Service of class example.com/vlan-lb: %v", svc.Status.LoadBalancer.Ingress)
	}

	current := &v1alpha1.AppsIngress{}
	if err := c.Get(ctx, key, current); err != nil {
		t.Fatal(err)
	}
	// A patch, not an update: the operator writes the object's status meanwhile, and an update of the copy read here
	// could meet a conflict before the validation.
	patch := client.MergeFrom(current.DeepCopy())
	current.Spec.Service.LoadBalancerClass = ptr.To("example.com/other")
	if err := c.Patch(ctx, current, patch); err == nil || !strings.Contains(err.Error(), "loadBalancerClass is immutable") {
		t.Fatalf("changing the class: %v, want the API server's refusal", err)
	}
}
