package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

const (
	// FieldManager is the operator's server-side apply identity, in both clusters.
	FieldManager = "apps-ingress-operator"
	// OwnerAnnotation on a hosted cluster's Service names the AppsIngress (namespace/name) that manages it; the
	// operator changes and deletes only Services that carry it with its own AppsIngress's key.
	OwnerAnnotation = "hostedcluster.virtual-ingress.io/owner"
	// OwnerHashLabel on a hosted cluster's Service is a hash of OwnerAnnotation's value, which is too long for a label
	// value: the Services one AppsIngress owns are listed by it, not found among every managed Service of the
	// namespace (a hosted cluster may hold many).
	OwnerHashLabel = "hostedcluster.virtual-ingress.io/owner-hash"
	// ManagedByLabel marks the Services the operator created.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	managedByValue = "apps-ingress-operator"

	defaultServiceNamespace  = "openshift-ingress"
	defaultAnnotationKey     = "metallb.io/address-pool"
	defaultRouterSelectorKey = "ingresscontroller.operator.openshift.io/deployment-ingresscontroller"
)

// serviceKey is the hosted cluster's Service of ai; clusterName is the resolved <cluster>.
func serviceKey(ai *v1alpha1.AppsIngress, clusterName string) types.NamespacedName {
	k := types.NamespacedName{Namespace: ai.Spec.Service.Namespace, Name: ai.Spec.Service.Name}
	if k.Namespace == "" {
		k.Namespace = defaultServiceNamespace
	}
	if k.Name == "" {
		k.Name = clusterName + "-apps"
	}
	return k
}

func ports(ai *v1alpha1.AppsIngress) (httpPort, httpsPort int32) {
	httpPort, httpsPort = ai.Spec.Service.Ports.HTTP, ai.Spec.Service.Ports.HTTPS
	if httpPort == 0 {
		httpPort = 80
	}
	if httpsPort == 0 {
		httpsPort = 443
	}
	return httpPort, httpsPort
}

// desiredService is the apply configuration of the LoadBalancer Service: only the fields the operator owns.
func desiredService(ai *v1alpha1.AppsIngress, key types.NamespacedName) *corev1ac.ServiceApplyConfiguration {
	selector := ai.Spec.Service.Selector
	if len(selector) == 0 {
		selector = map[string]string{defaultRouterSelectorKey: "default"}
	}
	annotations := map[string]string{OwnerAnnotation: ai.Namespace + "/" + ai.Name}
	if pool := ai.Spec.MetalLB.AddressPoolName; pool != "" {
		annotationKey := ai.Spec.MetalLB.AnnotationKey
		if annotationKey == "" {
			annotationKey = defaultAnnotationKey
		}
		annotations[annotationKey] = pool
	}
	httpPort, httpsPort := ports(ai)
	spec := corev1ac.ServiceSpec().
		WithType(corev1.ServiceTypeLoadBalancer).
		WithSelector(selector).
		WithPorts(
			corev1ac.ServicePort().WithName("http").WithProtocol(corev1.ProtocolTCP).WithPort(httpPort).WithTargetPort(intOrString("http")),
			corev1ac.ServicePort().WithName("https").WithProtocol(corev1.ProtocolTCP).WithPort(httpsPort).WithTargetPort(intOrString("https")),
		)
	if p := ai.Spec.Service.IPFamilyPolicy; p != nil {
		spec = spec.WithIPFamilyPolicy(*p)
	}
	if c := ai.Spec.Service.LoadBalancerClass; c != nil {
		spec = spec.WithLoadBalancerClass(*c)
	}
	if a := ai.Spec.Service.AllocateLoadBalancerNodePorts; a != nil {
		spec = spec.WithAllocateLoadBalancerNodePorts(*a)
	}
	return corev1ac.Service(key.Name, key.Namespace).
		WithLabels(map[string]string{ManagedByLabel: managedByValue, OwnerHashLabel: ownerHash(ai)}).
		WithAnnotations(annotations).
		WithSpec(spec)
}

// applyService creates or updates the Service, unless a Service of that name exists that this AppsIngress does not
// own: that one is left alone.
func applyService(ctx context.Context, kube kubernetes.Interface, ai *v1alpha1.AppsIngress, key types.NamespacedName) (*corev1.Service, *failure) {
	existing, err := kube.CoreV1().Services(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, unreachable(err)
	case existing.Annotations[OwnerAnnotation] != ai.Namespace+"/"+ai.Name:
		return nil, degraded("ServiceNotOwned", "Service %s exists in the hosted cluster and is not managed by this AppsIngress (annotation %s is %q); it is left unchanged",
			key, OwnerAnnotation, existing.Annotations[OwnerAnnotation])
	}
	svc, err := kube.CoreV1().Services(key.Namespace).Apply(ctx, desiredService(ai, key), metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		if isConnectionError(err) {
			return nil, unreachable(err)
		}
		return nil, degraded("ServiceRefused", "the hosted cluster refused Service %s: %v", key, err)
	}
	return svc, nil
}

// deleteService deletes the Service if this AppsIngress owns it; a missing Service is not an error.
func deleteService(ctx context.Context, kube kubernetes.Interface, ai *v1alpha1.AppsIngress, key types.NamespacedName) error {
	existing, err := kube.CoreV1().Services(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if existing.Annotations[OwnerAnnotation] != ai.Namespace+"/"+ai.Name {
		return nil
	}
	err = kube.CoreV1().Services(key.Namespace).Delete(ctx, key.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &existing.UID},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// deleteStaleServices deletes the Services of key's namespace that this AppsIngress owns under another name: the
// default name follows spec.clusterName, so a renamed cluster would otherwise leave its old Service holding its
// load-balancer address.
func deleteStaleServices(ctx context.Context, kube kubernetes.Interface, ai *v1alpha1.AppsIngress, key types.NamespacedName) error {
	selector := labels.Set{ManagedByLabel: managedByValue, OwnerHashLabel: ownerHash(ai)}.String()
	list, err := kube.CoreV1().Services(key.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err
	}
	for _, svc := range list.Items {
		if svc.Name == key.Name || svc.Annotations[OwnerAnnotation] != ai.Namespace+"/"+ai.Name {
			continue
		}
		if err := deleteService(ctx, kube, ai, types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}); err != nil {
			return err
		}
	}
	return nil
}

// deleteStaleServicesOnce is deleteStaleServices unless a reconcile of ai's generation already applied the Service
// and looked: only a spec change (clusterName, service.name) can leave a Service under another name.
func deleteStaleServicesOnce(ctx context.Context, kube kubernetes.Interface, ai *v1alpha1.AppsIngress, key types.NamespacedName) error {
	if c := meta.FindStatusCondition(ai.Status.Conditions, CondServiceReady); c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == ai.Generation {
		return nil
	}
	return deleteStaleServices(ctx, kube, ai, key)
}

// ownerHash is OwnerHashLabel's value for ai.
func ownerHash(ai *v1alpha1.AppsIngress) string {
	sum := sha256.Sum256([]byte(ai.Namespace + "/" + ai.Name))
	return hex.EncodeToString(sum[:10])
}

// externalIPs are the Service's load-balancer IPs, IPv4 first, each once.
func externalIPs(svc *corev1.Service) []netip.Addr {
	var out []netip.Addr
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(ing.IP); err == nil && !slices.Contains(out, a.Unmap()) {
			out = append(out, a.Unmap())
		}
	}
	slices.SortStableFunc(out, func(a, b netip.Addr) int {
		if a.Is4() != b.Is4() {
			if a.Is4() {
				return -1
			}
			return 1
		}
		return a.Compare(b)
	})
	return out
}

// outsideRanges lists the ips not in any of ranges (CIDRs or first-last); empty ranges means no check.
func outsideRanges(ips []netip.Addr, ranges []string) []string {
	if len(ranges) == 0 {
		return nil
	}
	var out []string
	for _, ip := range ips {
		if !slices.ContainsFunc(ranges, func(r string) bool { return inRange(ip, r) }) {
			out = append(out, ip.String())
		}
	}
	return out
}

func inRange(ip netip.Addr, r string) bool {
	if p, err := netip.ParsePrefix(strings.TrimSpace(r)); err == nil {
		return p.Contains(ip)
	}
	first, last, ok := strings.Cut(r, "-")
	if !ok {
		return false
	}
	a, err1 := netip.ParseAddr(strings.TrimSpace(first))
	b, err2 := netip.ParseAddr(strings.TrimSpace(last))
	return err1 == nil && err2 == nil && a.Compare(ip) <= 0 && ip.Compare(b) <= 0
}
