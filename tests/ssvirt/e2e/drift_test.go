//go:build e2e

package e2e_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/api"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
)

// The embedded reconciler puts back what someone changes or deletes by hand, and reports namespaces labelled as
// ssvirt's that no VDC owns without deleting them.
func TestDriftRepair(t *testing.T) {
	ctx := t.Context()
	sys := sysadmin(t)
	tn := newTenant(t, sys)
	var v api.VDC
	sys.must(t, "POST", "/api/admin/org/"+tn.org.ID+"/vdcs", vdcBody("drift", 1000, 1024, 1), http.StatusCreated, &v)

	// Quota edited: limits put back. (The quota controller writes the quota's status meanwhile: a conflict is
	// retried on the fresh object.)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		q := quota(t, v.Namespace)
		q.Spec.Hard[corev1.ResourceLimitsCPU] = resource.MustParse("64")
		_, err := kubeCS.CoreV1().ResourceQuotas(v.Namespace).Update(ctx, q, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "quota restored", 30*time.Second, func() (bool, string) {
		return hardIs(quota(t, v.Namespace), corev1.ResourceLimitsCPU, "1"), "still edited"
	})

	// Policy deleted: made again.
	if err := kubeCS.NetworkingV1().NetworkPolicies(v.Namespace).Delete(ctx, kube.PolicyName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "policy restored", 30*time.Second, func() (bool, string) {
		_, err := kubeCS.NetworkingV1().NetworkPolicies(v.Namespace).Get(ctx, kube.PolicyName, metav1.GetOptions{})
		return err == nil, "missing"
	})

	// A label edited away: the namespace drops out of the label-selected cache and is put back.
	var oldUID types.UID
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ns, err := namespace(ctx, v.Namespace)
		if err != nil {
			return err
		}
		oldUID = ns.UID
		ns.Labels[kube.LabelOrg] = "someone-else"
		_, err = kubeCS.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "label restored", 30*time.Second, func() (bool, string) {
		ns, _ := namespace(ctx, v.Namespace)
		return ns.Labels[kube.LabelOrg] == tn.org.Name, ns.Labels[kube.LabelOrg]
	})

	// The namespace deleted: made again, with quota and policy, once the old one is gone.
	if err := kubeCS.CoreV1().Namespaces().Delete(ctx, v.Namespace, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "namespace made again", 2*time.Minute, func() (bool, string) {
		ns, err := namespace(ctx, v.Namespace)
		if err != nil || ns.UID == oldUID || ns.DeletionTimestamp != nil {
			return false, "not yet"
		}
		if _, err := kubeCS.CoreV1().ResourceQuotas(v.Namespace).Get(ctx, kube.QuotaName, metav1.GetOptions{}); err != nil {
			return false, "no quota"
		}
		_, err = kubeCS.NetworkingV1().NetworkPolicies(v.Namespace).Get(ctx, kube.PolicyName, metav1.GetOptions{})
		return err == nil, "no policy"
	})

	// An orphan: labelled as ssvirt's, owned by no VDC. Reported, not deleted.
	orphan := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unique("vdc-orphan-"), Labels: map[string]string{
		kube.LabelManagedBy: kube.ManagedBy, kube.LabelVDCID: "00000000-0000-0000-0000-000000000000",
	}}}
	if _, err := kubeCS.CoreV1().Namespaces().Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "orphan reported", 30*time.Second, func() (bool, string) {
		return slices.Contains(srv.Cluster.Orphans(), orphan.Name), "not reported"
	})
	if _, r := readiness(t, srv); !slices.Contains(r.OrphanNamespaces, orphan.Name) {
		t.Errorf("/readyz does not report the orphan: %+v", r)
	}
	time.Sleep(3 * time.Second) // a resync period
	if _, err := namespace(ctx, orphan.Name); apierrors.IsNotFound(err) {
		t.Fatal("the orphan namespace was deleted")
	}
}
