package devcluster

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/gatewayapi"
)

// ApplyCRDs server-side applies CRDs (a test's prerequisites, e.g. Gateway API's) and waits until the API server
// serves every one of them.
func (c *Cluster) ApplyCRDs(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) error {
	a, err := newApplier(c.rest)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(crds))
	for _, crd := range crds {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return err
		}
		obj := &unstructured.Unstructured{Object: content}
		obj.SetAPIVersion("apiextensions.k8s.io/v1")
		obj.SetKind("CustomResourceDefinition")
		// Applying status or a creationTimestamp would be refused or ignored; neither is the test's to set.
		delete(obj.Object, "status")
		unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
		if _, err := a.apply(ctx, obj); err != nil {
			return err
		}
		names = append(names, crd.Name)
	}
	return c.waitEstablished(ctx, a, "the CRDs", names)
}

// waitEstablished waits until the API server serves every CRD named.
func (c *Cluster) waitEstablished(ctx context.Context, a *applier, what string, names []string) error {
	return c.waitFor(ctx, what+" to be established", func(ctx context.Context) (bool, error) {
		for _, name := range names {
			crd, err := a.dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if !conditionTrue(crd, "Established") {
				return false, fmt.Errorf("CRD %s not established yet", name)
			}
		}
		return true, nil
	})
}

// ApplyGatewayAPICRDs applies Gateway API's standard CRDs at the version the repository pins (internal/testkit/
// gatewayapi), so that HTTPRoutes are served.
func (c *Cluster) ApplyGatewayAPICRDs(ctx context.Context) error {
	crds, err := gatewayapi.StandardCRDs(ctx, c.opts.RepoRoot)
	if err != nil {
		return err
	}
	return c.ApplyCRDs(ctx, crds)
}
