package policysim

import (
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/cli/values"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// sourceKind is a kind whose writes the chart's policies resolve into a status and a generated object. preview and
// compare run an object of either through the policies that match its own kind only.
type sourceKind struct {
	gvk      schema.GroupVersionKind
	resource string // the plural: CEL matchConstraints and the CRD's name use it
	// enabledBy is the value that must be true for the chart to render the kind's policies (nil: always rendered).
	enabledBy []string
}

var (
	virtualIngressGVK   = v1alpha1.GroupVersion.WithKind("VirtualIngress")
	virtualHTTPRouteGVK = v1alpha1.GroupVersion.WithKind("VirtualHTTPRoute")

	sourceKinds = []sourceKind{
		{gvk: virtualIngressGVK, resource: "virtualingresses"},
		{gvk: virtualHTTPRouteGVK, resource: "virtualhttproutes", enabledBy: []string{"gatewayAPI", "routes"}},
	}
)

func (k sourceKind) crdName() string { return k.resource + "." + k.gvk.Group }

// enabledByText names enabledBy as a values file sets it, for messages.
func (k sourceKind) enabledByText() string { return strings.Join(k.enabledBy, ".") + ": true" }

func SourceGVKs() []schema.GroupVersionKind {
	gvks := make([]schema.GroupVersionKind, 0, len(sourceKinds))
	for _, k := range sourceKinds {
		gvks = append(gvks, k.gvk)
	}
	return gvks
}

// EnablingValues are the values an offline render needs, under the user's, to hold the policies of every kind among
// the inputs. The chart's default for the route policies (auto) renders them only where the cluster serves
// HTTPRoutes, and a render without a cluster serves none. Values files that set such a value keep their choice.
func EnablingValues(valuesFiles []string, in Inputs) (map[string]any, error) {
	var users map[string]any
	extra := map[string]any{}
	for _, k := range sourceKinds {
		if k.enabledBy == nil || !in.hasKind(k.gvk) {
			continue
		}
		if users == nil {
			// No getter providers, as in internal/testkit/render: values files are local paths only.
			var err error
			if users, err = (&values.Options{ValueFiles: valuesFiles}).MergeValues(nil); err != nil {
				return nil, fmt.Errorf("reading values: %w", err)
			}
		}
		if _, set, _ := unstructured.NestedFieldNoCopy(users, k.enabledBy...); set {
			continue
		}
		if err := unstructured.SetNestedField(extra, true, k.enabledBy...); err != nil {
			return nil, err
		}
	}
	if len(extra) == 0 {
		return nil, nil
	}
	return extra, nil
}
