package virtualingress

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

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
	chartDir, err := chartDir()
	if err != nil {
		return ChartController{}, err
	}
	docs, err := render.Render(chartDir, valueFiles, values)
	if err != nil {
		return ChartController{}, err
	}
	cc, found, err := chartControllerIn(docs)
	if err == nil && !found {
		err = fmt.Errorf("%s renders no status controller Deployment", chartDir)
	}
	return cc, err
}

// InstalledController reads the status controller Deployment a release installed in namespace: what Helm rendered
// against this cluster, so with the Gateway API it found (gatewayAPI.routes: auto), unlike RenderChartController.
func InstalledController(ctx context.Context, dyn dynamic.Interface, namespace string) (ChartController, error) {
	list, err := dyn.Resource(deploymentGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return ChartController{}, err
	}
	docs := make([]render.Document, 0, len(list.Items))
	for i := range list.Items {
		docs = append(docs, render.Document{Object: &list.Items[i]})
	}
	cc, found, err := chartControllerIn(docs)
	if err == nil && !found {
		err = fmt.Errorf("no status controller Deployment in namespace %s", namespace)
	}
	return cc, err
}

var deploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// chartControllerIn finds the status controller Deployment among docs and parses its arguments with the binary's own
// flags (an argument the binary does not take is an error).
func chartControllerIn(docs []render.Document) (ChartController, bool, error) {
	var cc ChartController
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
			return cc, true, fmt.Errorf("the chart's status controller arguments: %w", err)
		}
		cc.Options = o.Controller
		return cc, true, nil
	}
	return cc, false, nil
}

func chartDir() (string, error) {
	root, err := repo.Root()
	return filepath.Join(root, "charts", "virtual-ingress"), err
}
