package controller

import (
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// decodeVirtualIngress converts a VirtualIngress into its API type.
func decodeVirtualIngress(obj *unstructured.Unstructured) (*view, error) {
	vi := &v1alpha1.VirtualIngress{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, vi); err != nil {
		return nil, err
	}
	return virtualIngressView(vi), nil
}

func virtualIngressView(vi *v1alpha1.VirtualIngress) *view {
	v := &view{meta: vi, conditions: vi.Status.Conditions}
	if len(vi.Status.Backends) > 0 {
		backends := make([]backend, len(vi.Status.Backends))
		for i, b := range vi.Status.Backends {
			backends[i] = backend{BackendStatus: b}
		}
		v.backends = withSelectors(backends, virtualIngressSelectors(&vi.Spec))
	}
	if ing := vi.Status.Ingress; ing != nil {
		v.generatedName = ing.Name
		if ing.Spec != nil && !equality.Semantic.DeepEqual(ing.Spec, &networkingv1.IngressSpec{}) {
			v.want = wantedIngress{spec: ing.Spec}
		}
	}
	return v
}

// wantedIngress is status.ingress.spec. The Ingress holds it when the two specs are equal as types, i.e. as the API
// server stores them.
type wantedIngress struct{ spec *networkingv1.IngressSpec }

func (w wantedIngress) heldBy(generated client.Object) (bool, error) {
	ing, ok := generated.(*networkingv1.Ingress)
	if !ok {
		return false, fmt.Errorf("an Ingress read as %T", generated)
	}
	return equality.Semantic.DeepEqual(&ing.Spec, w.spec), nil
}
