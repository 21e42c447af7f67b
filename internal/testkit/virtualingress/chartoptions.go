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

// ChartControllerOptions are the status controller's options as the repository's virtual-ingress chart configures
// its Deployment for values: the container's arguments, parsed by the controller's own flags (the manager's, which a test process does
// not take, are skipped). The render sees no Gateway API, so callers that installed it set Routes themselves.
func ChartControllerOptions(values map[string]any) (controller.Options, error) {
	var opts controller.Options
	root, err := repo.Root()
	if err != nil {
		return opts, err
	}
	chartDir := filepath.Join(root, "charts", "virtual-ingress")
	docs, err := render.Render(chartDir, nil, values)
	if err != nil {
		return opts, err
	}
	for _, d := range docs {
		if d.Object.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(d.Object.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			container, _ := c.(map[string]any)
			if container["name"] != "controller" {
				continue
			}
			args, _, _ := unstructured.NestedStringSlice(container, "args")
			fs := flag.NewFlagSet("chart", flag.ContinueOnError)
			opts.BindFlags(fs)
			var own []string
			for _, a := range args {
				name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				if fs.Lookup(name) != nil {
					own = append(own, a)
				}
			}
			if err := fs.Parse(own); err != nil {
				return opts, fmt.Errorf("the chart's status controller arguments: %w", err)
			}
			return opts, nil
		}
	}
	return opts, fmt.Errorf("%s renders no status controller Deployment", chartDir)
}
