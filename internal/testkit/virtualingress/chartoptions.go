package virtualingress

import (
	"flag"
	"fmt"
	"path/filepath"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/options"
)

// ChartController is the status controller as the repository's virtual-ingress chart deploys it for some values.
type ChartController struct {
	// Namespace and ServiceAccount are the identity the Deployment's Pods run with.
	Namespace, ServiceAccount string
	// Args are the controller container's arguments.
	Args []string
	// Options are the controller's part of Args, parsed by the binary's own flags (an argument the binary does not
	// take fails the render).
	Options controller.Options
}

// RenderChartController renders the chart with values and reads its status controller Deployment. The render sees no
// Gateway API, so callers that installed it set Options.Routes themselves.
func RenderChartController(values map[string]any) (ChartController, error) {
	return renderChartController(nil, values)
}

func renderChartController(valueFiles []string, values map[string]any) (ChartController, error) {
	var cc ChartController
	chartDir, err := chartDir()
	if err != nil {
		return cc, err
	}
	docs, err := render.Render(chartDir, valueFiles, values)
	if err != nil {
		return cc, err
	}
	for _, c := range render.Containers(docs) {
		if c.Object.GetKind() != "Deployment" || c.Name != "controller" {
			continue
		}
		cc.Namespace = c.Object.GetNamespace()
		cc.ServiceAccount = c.ServiceAccount
		cc.Args = c.Args
		var o options.Options
		fs := flag.NewFlagSet("virtual-ingress-controller", flag.ContinueOnError)
		o.BindFlags(fs)
		if err := render.ParseArgs(fs, cc.Args); err != nil {
			return cc, fmt.Errorf("the chart's status controller arguments: %w", err)
		}
		cc.Options = o.Controller
		return cc, nil
	}
	return cc, fmt.Errorf("%s renders no status controller Deployment", chartDir)
}

func chartDir() (string, error) {
	root, err := repo.Root()
	return filepath.Join(root, "charts", "virtual-ingress"), err
}

// ChartControllerOptions are the status controller's options as the chart configures its Deployment for values.
func ChartControllerOptions(values map[string]any) (controller.Options, error) {
	cc, err := RenderChartController(values)
	return cc.Options, err
}
