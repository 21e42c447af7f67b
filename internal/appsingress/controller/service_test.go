package controller

import (
	"fmt"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/api/v1alpha1"
)

func example() *v1alpha1.AppsIngress {
	return &v1alpha1.AppsIngress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "prod"},
		Spec: v1alpha1.AppsIngressSpec{
			HostedClusterRef: v1alpha1.HostedClusterRef{Name: "prod"},
			BaseDomain:       "example.com",
		},
	}
}

func TestDesiredServiceDefaults(t *testing.T) {
	ai := example()
	key := serviceKey(ai, clusterName(ai))
	if key.String() != "openshift-ingress/prod-apps" {
		t.Fatalf("Service %s, want openshift-ingress/prod-apps", key)
	}
	svc := desiredService(ai, key)
	if *svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		t.Errorf("type %s", *svc.Spec.Type)
	}
	if got := svc.Spec.Selector[defaultRouterSelectorKey]; got != "default" || len(svc.Spec.Selector) != 1 {
		t.Errorf("selector %v", svc.Spec.Selector)
	}
	if svc.Annotations[OwnerAnnotation] != "clusters/prod" {
		t.Errorf("owner annotation %v", svc.Annotations)
	}
	if _, ok := svc.Annotations[defaultAnnotationKey]; ok {
		t.Error("a pool annotation without a pool name")
	}
	got := fmt.Sprint(*svc.Spec.Ports[0].Name, *svc.Spec.Ports[0].Port, *svc.Spec.Ports[1].Name, *svc.Spec.Ports[1].Port)
	if got != "http80https443" {
		t.Errorf("ports %s", got)
	}
	if svc.Spec.IPFamilyPolicy != nil {
		t.Errorf("ipFamilyPolicy %v without one in the spec", *svc.Spec.IPFamilyPolicy)
	}
	if svc.Spec.AllocateLoadBalancerNodePorts != nil {
		t.Errorf("allocateLoadBalancerNodePorts %v without one in the spec", *svc.Spec.AllocateLoadBalancerNodePorts)
	}
}

func TestDesiredServiceFromSpec(t *testing.T) {
	ai := example()
	policy := corev1.IPFamilyPolicyPreferDualStack
	ai.Spec.ClusterName = "p1"
	ai.Spec.Service = v1alpha1.ServiceSpec{Namespace: "routers", Selector: map[string]string{"app": "router"},
		Ports: v1alpha1.ServicePorts{HTTP: 8080, HTTPS: 8443}, IPFamilyPolicy: &policy, AllocateLoadBalancerNodePorts: new(false)}
	ai.Spec.MetalLB = v1alpha1.MetalLBSpec{AddressPoolName: "vlan10", AnnotationKey: "metallb.universe.tf/address-pool"}
	key := serviceKey(ai, clusterName(ai))
	if key.String() != "routers/p1-apps" {
		t.Fatalf("Service %s", key)
	}
	svc := desiredService(ai, key)
	if svc.Annotations["metallb.universe.tf/address-pool"] != "vlan10" {
		t.Errorf("annotations %v", svc.Annotations)
	}
	if svc.Spec.Selector["app"] != "router" || *svc.Spec.Ports[1].Port != 8443 || *svc.Spec.IPFamilyPolicy != policy ||
		*svc.Spec.AllocateLoadBalancerNodePorts {
		t.Errorf("spec %+v", svc.Spec)
	}
}

func TestExternalIPsAreUniqueIPv4First(t *testing.T) {
	svc := &corev1.Service{}
	for _, ip := range []string{"2001:db8::1", "192.0.2.10", "", "192.0.2.10", "not-an-ip"} {
		svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip, Hostname: "lb.example.com"})
	}
	if got := fmt.Sprint(externalIPs(svc)); got != "[192.0.2.10 2001:db8::1]" {
		t.Fatalf("got %s", got)
	}
}

func TestOutsideRanges(t *testing.T) {
	ips := []netip.Addr{netip.MustParseAddr("192.0.2.5"), netip.MustParseAddr("192.0.2.50"), netip.MustParseAddr("2001:db8::9")}
	if got := outsideRanges(ips, nil); got != nil {
		t.Errorf("no ranges: %v", got)
	}
	got := fmt.Sprint(outsideRanges(ips, []string{"192.0.2.0/28", "2001:db8::1 - 2001:db8::10"}))
	if got != "[192.0.2.50]" {
		t.Errorf("got %s", got)
	}
}

func TestEntryComesFromStatusAndIsDroppedOnDeletion(t *testing.T) {
	ai := example()
	if _, ok := entry(ai); ok {
		t.Fatal("an entry without external IPs")
	}
	ai.Status.ExternalIPs = []string{"192.0.2.10"}
	ai.Status.APIEndpoint = "api.prod.example.com:6443"
	ai.Spec.DNS.VLANCIDRs = []string{"10.0.0.0/24"}
	c, ok := entry(ai)
	if !ok || c.AppsDomain() != "apps.prod.example.com" || c.HTTPSPort != 443 || len(c.VLANCIDRs) != 1 || c.APIEndpoint == "" {
		t.Fatalf("entry %+v", c)
	}
	now := metav1.Now()
	ai.DeletionTimestamp = &now
	if _, ok := entry(ai); ok {
		t.Fatal("an entry for an AppsIngress being deleted")
	}
}

func TestEndpointFromServer(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.prod.example.com:6443": "api.prod.example.com:6443",
		"https://10.0.0.1":                  "10.0.0.1:443",
		"https://[2001:db8::1]:6443":        "[2001:db8::1]:6443",
		"::":                                "",
	} {
		if got := endpointFromServer(in); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

func TestHostedClusterNamespaceDefaultsToTheAppsIngressNamespace(t *testing.T) {
	ai := example()
	if got := hostedClusterKey(ai).String(); got != "clusters/prod" {
		t.Errorf("got %s", got)
	}
	ai.Spec.HostedClusterRef.Namespace = "other"
	if got := hostedClusterKey(ai).String(); got != "other/prod" {
		t.Errorf("got %s", got)
	}
}
