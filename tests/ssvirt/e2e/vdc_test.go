//go:build e2e

package e2e_test

import (
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
)

func quota(t *testing.T, ns string) *corev1.ResourceQuota {
	t.Helper()
	q, err := kubeCS.CoreV1().ResourceQuotas(ns).Get(t.Context(), kube.QuotaName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("quota of %s: %v", ns, err)
	}
	return q
}

func hardIs(q *corev1.ResourceQuota, name corev1.ResourceName, want string) bool {
	got, ok := q.Spec.Hard[name]
	if want == "" {
		return !ok
	}
	return ok && got.Cmp(resource.MustParse(want)) == 0
}

// A VDC is a namespace with the proposal's labels, a quota from its limits and a policy that denies ingress
// from other VDCs; changes reach them; deleting removes the namespace, then the row.
func TestVDCLifecycle(t *testing.T) {
	ctx := t.Context()
	sys := sysadmin(t)
	tn := newTenant(t, sys)
	var v api.VDC
	sys.must(t, "POST", "/api/admin/org/"+tn.org.ID+"/vdcs", vdcBody("Web_Tier.1", 2000, 4096, 20), http.StatusCreated, &v)
	if v.Status != "READY" || v.Namespace != "vdc-"+tn.org.Name+"-web-tier-1" {
		t.Fatalf("created VDC: %+v", v)
	}
	ns, err := namespace(ctx, v.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	vdcUUID := v.ID[len("urn:vcloud:vdc:"):]
	for k, want := range map[string]string{
		"ssvirt.io/organization": tn.org.Name, "ssvirt.io/vdc": "Web_Tier.1", "ssvirt.io/vdc-id": vdcUUID,
		"ssvirt.io/organization-id": tn.org.ID[len("urn:vcloud:org:"):], "app.kubernetes.io/managed-by": "ssvirt",
		"app.kubernetes.io/component": "vdc",
	} {
		if ns.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, ns.Labels[k], want)
		}
	}
	if ns.Annotations["ssvirt.io/vdc-urn"] != v.ID || ns.Annotations["ssvirt.io/organization-urn"] != tn.org.ID {
		t.Errorf("annotations: %v", ns.Annotations)
	}
	q := quota(t, v.Namespace)
	if !hardIs(q, corev1.ResourceLimitsCPU, "2") || !hardIs(q, corev1.ResourceLimitsMemory, "4Gi") ||
		!hardIs(q, corev1.ResourceRequestsStorage, "20Gi") || !hardIs(q, corev1.ResourcePods, "") {
		t.Errorf("quota: %v", q.Spec.Hard)
	}
	np, err := kubeCS.NetworkingV1().NetworkPolicies(v.Namespace).Get(ctx, kube.PolicyName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(np.Spec.PolicyTypes) != 1 || np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress || len(np.Spec.Ingress) != 1 ||
		len(np.Spec.Ingress[0].From) != 2 || np.Spec.Ingress[0].From[1].NamespaceSelector.MatchExpressions[0].Key != kube.LabelVDCID {
		t.Errorf("network policy: %+v", np.Spec)
	}

	// Users of the organization read it; the admin API is not theirs.
	var got api.VDC
	tn.user.must(t, "GET", "/cloudapi/1.0.0/vdcs/"+v.ID, nil, http.StatusOK, &got)
	if got.Namespace != v.Namespace {
		t.Errorf("user's view: %+v", got)
	}
	tn.user.must(t, "GET", "/api/admin/org/"+tn.org.ID+"/vdcs", nil, http.StatusForbidden, nil)
	tn.admin.must(t, "GET", "/api/admin/org/"+tn.org.ID+"/vdcs/"+v.ID, nil, http.StatusOK, nil)
	tn.admin.must(t, "POST", "/api/admin/org/"+tn.org.ID+"/vdcs", vdcBody("x", 0, 0, 0), http.StatusForbidden, nil)

	// Limits and disabling reach the quota and the namespace.
	disabled := false
	upd := vdcBody("Web_Tier.1", 500, 0, 5)
	upd.IsEnabled = &disabled
	sys.must(t, "PUT", "/api/admin/org/"+tn.org.ID+"/vdcs/"+v.ID, upd, http.StatusOK, &got)
	if got.Status != "READY" || *got.IsEnabled {
		t.Fatalf("updated: %+v", got)
	}
	q = quota(t, v.Namespace)
	if !hardIs(q, corev1.ResourceLimitsCPU, "500m") || !hardIs(q, corev1.ResourceLimitsMemory, "") ||
		!hardIs(q, corev1.ResourceRequestsStorage, "5Gi") || !hardIs(q, corev1.ResourcePods, "0") {
		t.Errorf("quota after update: %v", q.Spec.Hard)
	}
	if ns, _ := namespace(ctx, v.Namespace); ns.Annotations["ssvirt.io/enabled"] != "false" {
		t.Errorf("enabled annotation after disabling: %v", ns.Annotations)
	}

	// The organization cannot go while it has the VDC.
	sys.must(t, "DELETE", "/cloudapi/1.0.0/orgs/"+tn.org.ID, nil, http.StatusConflict, nil)

	code := sys.do(t, "DELETE", "/api/admin/org/"+tn.org.ID+"/vdcs/"+v.ID, nil, nil)
	if code != http.StatusAccepted && code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	tn.user.must(t, "GET", "/cloudapi/1.0.0/vdcs/"+v.ID, nil, http.StatusForbidden, nil)
	eventually(t, "namespace and row gone", time.Minute, func() (bool, string) {
		_, err := namespace(ctx, v.Namespace)
		if !apierrors.IsNotFound(err) {
			return false, "namespace still there"
		}
		if _, err := srv.Store.VDCByNamespace(ctx, v.Namespace); err == nil {
			return false, "row still there"
		}
		return true, ""
	})
	sys.must(t, "DELETE", "/cloudapi/1.0.0/orgs/"+tn.org.ID, nil, http.StatusNoContent, nil)
}

// A namespace of the VDC's name that is not ssvirt's is neither adopted nor deleted: the VDC gets a suffixed
// namespace of its own.
func TestForeignNamespaceNotAdopted(t *testing.T) {
	ctx := t.Context()
	sys := sysadmin(t)
	tn := newTenant(t, sys)
	foreign := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "vdc-" + tn.org.Name + "-db", Labels: map[string]string{"team": "dba"}}}
	if _, err := kubeCS.CoreV1().Namespaces().Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var v api.VDC
	sys.must(t, "POST", "/api/admin/org/"+tn.org.ID+"/vdcs", vdcBody("db", 0, 0, 0), http.StatusCreated, &v)
	if v.Namespace == foreign.Name || v.Status != "READY" {
		t.Fatalf("VDC next to a foreign namespace: %+v", v)
	}
	time.Sleep(3 * time.Second) // a resync period: the tombstone of the foreign name is processed
	ns, err := namespace(ctx, foreign.Name)
	if err != nil || ns.DeletionTimestamp != nil || ns.Labels["team"] != "dba" || ns.Labels[kube.LabelVDCID] != "" {
		t.Fatalf("the foreign namespace was touched: %+v %v", ns, err)
	}
	if _, err := kubeCS.CoreV1().ResourceQuotas(foreign.Name).Get(ctx, kube.QuotaName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a quota was put into the foreign namespace: %v", err)
	}
}
