package controller

import (
	"context"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/hosted"
)

// MetalLB's API, as installed by the user in the hosted cluster. The operator only reads it.
var (
	metalLBGroupVersion = schema.GroupVersion{Group: "metallb.io", Version: "v1beta1"}
	ipAddressPools      = metalLBGroupVersion.WithResource("ipaddresspools")
	l2Advertisements    = metalLBGroupVersion.WithResource("l2advertisements")
)

// checkMetalLB verifies that MetalLB's CRDs are served in the hosted cluster and that the named pool and
// L2Advertisement exist. It never creates or changes anything of MetalLB's.
func checkMetalLB(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, spec v1alpha1.MetalLBSpec) *failure {
	resources, err := kube.Discovery().ServerResourcesForGroupVersion(metalLBGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return degraded("MetalLBNotInstalled", "the hosted cluster does not serve %s: install MetalLB there (the operator never installs it)", metalLBGroupVersion)
	}
	if err != nil {
		return unreachable(err)
	}
	if !slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == ipAddressPools.Resource }) {
		return degraded("MetalLBNotInstalled", "the hosted cluster serves %s without %s", metalLBGroupVersion, ipAddressPools.Resource)
	}
	if name := spec.AddressPoolName; name != "" {
		if f := findByName(ctx, dyn, ipAddressPools, name, "AddressPoolNotFound"); f != nil {
			return f
		}
	}
	if name := spec.L2AdvertisementName; name != "" {
		if f := findByName(ctx, dyn, l2Advertisements, name, "L2AdvertisementNotFound"); f != nil {
			return f
		}
	}
	return nil
}

// findByName looks for a MetalLB object by name in any namespace: MetalLB's namespace is the user's choice.
func findByName(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, name, reason string) *failure {
	list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		return unreachable(err)
	}
	if len(list.Items) == 0 {
		return degraded(reason, "the hosted cluster has no %s named %q", gvr.Resource, name)
	}
	return nil
}

// metallbRecheck is how long MetalLB found installed with the named pool is taken as still so for the same hosted
// cluster: a fleet sharing one needs no round of requests per reconcile, and a MetalLB removed shows within it.
const metallbRecheck = 30 * time.Second

// checkMetalLBCached is checkMetalLB, skipped when it found the same spec in order on hc within metallbRecheck.
func checkMetalLBCached(ctx context.Context, hc *hosted.Cluster, spec v1alpha1.MetalLBSpec) *failure {
	key := "metallb/" + spec.AddressPoolName + "/" + spec.L2AdvertisementName
	if hc.CheckedWithin(key, metallbRecheck) {
		return nil
	}
	if f := checkMetalLB(ctx, hc.Kube, hc.Dynamic, spec); f != nil {
		return f
	}
	hc.Checked(key)
	return nil
}
