package kube

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/naming"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
)

func vdcLabels(v store.VDC) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedBy,
		LabelComponent: "vdc",
		LabelOrg:       v.OrgName,
		LabelOrgID:     v.OrgID,
		LabelVDC:       v.Name,
		LabelVDCID:     v.ID,
	}
}

func namespaceApply(v store.VDC) *corev1ac.NamespaceApplyConfiguration {
	return corev1ac.Namespace(v.Namespace).
		WithLabels(vdcLabels(v)).
		WithAnnotations(map[string]string{
			AnnotationOrgURN:  naming.URN(naming.KindOrg, v.OrgID),
			AnnotationVDCURN:  naming.URN(naming.KindVDC, v.ID),
			AnnotationEnabled: strconv.FormatBool(v.Enabled),
		})
}

// quotaApply turns the VDC's limits into a ResourceQuota: a limit of 0 is no limit. A disabled VDC keeps its
// workloads' objects but may run no Pods.
func quotaApply(v store.VDC) *corev1ac.ResourceQuotaApplyConfiguration {
	hard := corev1.ResourceList{}
	if v.CPUMillicores > 0 {
		hard[corev1.ResourceLimitsCPU] = *resource.NewMilliQuantity(v.CPUMillicores, resource.DecimalSI)
		hard[corev1.ResourceRequestsCPU] = *resource.NewMilliQuantity(v.CPUMillicores, resource.DecimalSI)
	}
	if v.MemoryMiB > 0 {
		hard[corev1.ResourceLimitsMemory] = *resource.NewQuantity(v.MemoryMiB<<20, resource.BinarySI)
		hard[corev1.ResourceRequestsMemory] = *resource.NewQuantity(v.MemoryMiB<<20, resource.BinarySI)
	}
	if v.StorageGiB > 0 {
		hard[corev1.ResourceRequestsStorage] = *resource.NewQuantity(v.StorageGiB<<30, resource.BinarySI)
	}
	if !v.Enabled {
		hard[corev1.ResourcePods] = *resource.NewQuantity(0, resource.DecimalSI)
	}
	return corev1ac.ResourceQuota(QuotaName, v.Namespace).
		WithLabels(vdcLabels(v)).
		WithSpec(corev1ac.ResourceQuotaSpec().WithHard(hard))
}

// policyApply admits ingress from the namespace itself and from namespaces that are not VDCs (ingress
// controllers, monitoring), and so denies it from every other VDC.
func policyApply(v store.VDC) *networkingv1ac.NetworkPolicyApplyConfiguration {
	return networkingv1ac.NetworkPolicy(PolicyName, v.Namespace).
		WithLabels(vdcLabels(v)).
		WithSpec(networkingv1ac.NetworkPolicySpec().
			WithPodSelector(metav1ac.LabelSelector()).
			WithPolicyTypes(networkingv1.PolicyTypeIngress).
			WithIngress(networkingv1ac.NetworkPolicyIngressRule().WithFrom(
				networkingv1ac.NetworkPolicyPeer().WithPodSelector(metav1ac.LabelSelector()),
				networkingv1ac.NetworkPolicyPeer().WithNamespaceSelector(metav1ac.LabelSelector().WithMatchExpressions(
					metav1ac.LabelSelectorRequirement().WithKey(LabelVDCID).WithOperator(metav1.LabelSelectorOpDoesNotExist))),
			)))
}
