package virtualingress

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"

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
	for _, c := range render.Containers(docs) {
		if c.Object.GetKind() != "Deployment" || c.Name != "controller" {
			continue
		}
		cc.Namespace = c.Object.GetNamespace()
		cc.ServiceAccount = c.ServiceAccount
		cc.Args = c.Args
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
	return cc, fmt.Errorf("%s renders no status controller Deployment", chartDir)
}

// ChartControllerOptions are the status controller's options as the chart configures its Deployment for values.
func ChartControllerOptions(values map[string]any) (controller.Options, error) {
	cc, err := RenderChartController(values)
	return cc.Options, err
}
