package virtualingress

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/controller"
)

// ChartController is the status controller as the repository's virtual-ingress chart deploys it for some values.
type ChartController struct {
	// Namespace and ServiceAccount are the identity the Deployment's Pods run with.
	Namespace, ServiceAccount string
	// Args are the controller container's arguments.
	Args []string
	// Options are Args parsed by the controller's own flags (the manager's, which a test process does not take, are
	// skipped).
	Options controller.Options
}

// RenderChartController renders the chart with values and reads its status controller Deployment. The render sees no
// Gateway API, so callers that installed it set Options.Routes themselves.
func RenderChartController(values map[string]any) (ChartController, error) {
	var cc ChartController
	root, err := repo.Root()
	if err != nil {
		return cc, err
	}
	chartDir := filepath.Join(root, "charts", "virtual-ingress")
	docs, err := render.Render(chartDir, nil, values)
	if err != nil {
		return cc, err
	}
	for _, d := range docs {
		if d.Object.GetKind() != "Deployment" {
			continue
		}
		pod, _, _ := unstructured.NestedMap(d.Object.Object, "spec", "template", "spec")
		containers, _, _ := unstructured.NestedSlice(pod, "containers")
		for _, c := range containers {
			container, _ := c.(map[string]any)
			if container["name"] != "controller" {
				continue
			}
			cc.Namespace = d.Object.GetNamespace()
			cc.ServiceAccount, _, _ = unstructured.NestedString(pod, "serviceAccountName")
			cc.Args, _, _ = unstructured.NestedStringSlice(container, "args")
			fs := flag.NewFlagSet("chart", flag.ContinueOnError)
			cc.Options.BindFlags(fs)
			var own []string
			for _, a := range cc.Args {
				name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				if fs.Lookup(name) != nil {
					own = append(own, a)
				}
			}
			if err := fs.Parse(own); err != nil {
				return cc, fmt.Errorf("the chart's status controller arguments: %w", err)
			}
			return cc, nil
		}
	}
	return cc, fmt.Errorf("%s renders no status controller Deployment", chartDir)
}

// ChartControllerOptions are the status controller's options as the chart configures its Deployment for values.
func ChartControllerOptions(values map[string]any) (controller.Options, error) {
	cc, err := RenderChartController(values)
	return cc.Options, err
}
