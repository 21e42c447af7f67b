package controller

import (
	"context"
	"net/netip"
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// Every ready endpoint of the Service is asked, at the number of the port named for it; endpoints not ready, other
// Services' and other ports' are not.
func TestServiceReplicasAreTheReadyEndpointsAtTheNamedPort(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := discoveryv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	slice := func(name, svc string, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "ops", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
			AddressType: discoveryv1.AddressTypeIPv4, Ports: ports, Endpoints: eps,
		}
	}
	ep := func(ip string, ready bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}
	}
	dnsPorts := []discoveryv1.EndpointPort{{Name: ptr.To("dns-tcp"), Port: ptr.To[int32](5353)}, {Name: ptr.To("dns"), Port: ptr.To[int32](5353)}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		slice("dns-a", "dns", dnsPorts, ep("10.0.0.1", true), ep("10.0.0.2", false)),
		slice("dns-b", "dns", dnsPorts, ep("10.0.0.3", true)),
		slice("other", "proxy", dnsPorts, ep("10.0.0.9", true)),
	).Build()
	got, err := ServiceReplicas{Reader: c, Service: types.NamespacedName{Namespace: "ops", Name: "dns"}, Port: "dns"}.Addresses(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.AddrPort{netip.MustParseAddrPort("10.0.0.1:5353"), netip.MustParseAddrPort("10.0.0.3:5353")}
	slices.SortFunc(got, func(a, b netip.AddrPort) int { return a.Compare(b) })
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	none, err := ServiceReplicas{Reader: c, Service: types.NamespacedName{Namespace: "ops", Name: "dns"}, Port: "status"}.Addresses(context.Background())
	if err != nil || len(none) != 0 {
		t.Fatalf("a port the Service does not have gave %v, %v", none, err)
	}
}
