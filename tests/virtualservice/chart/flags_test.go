// Package chart checks renders of the virtualservice-operator chart that golden files cannot: that the binary takes
// the arguments the chart gives it.
package chart

import (
	"flag"
	"testing"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/options"
)

const chartDir = "../../../charts/virtualservice-operator"

// parseChart renders the chart and parses its operator container's arguments with the binary's own flags; an
// unknown flag, a stray argument or options the binary would refuse fail the test.
func parseChart(t *testing.T, valuesFiles []string, values map[string]any) options.Options {
	t.Helper()
	docs, err := render.Render(chartDir, valuesFiles, values)
	if err != nil {
		t.Fatal(err)
	}
	// What the chart's env gives the container.
	t.Setenv("POD_NAMESPACE", render.Namespace)
	var opts []options.Options
	for _, c := range render.Containers(docs) {
		if c.Object.GetKind() != "Deployment" {
			continue
		}
		var o options.Options
		fs := flag.NewFlagSet("virtualservice-operator", flag.ContinueOnError)
		o.BindFlags(fs)
		if err := render.ParseArgs(fs, c.Args); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if err := o.Validate(); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		opts = append(opts, o)
	}
	if len(opts) != 1 {
		t.Fatalf("%d Deployment containers, want the operator alone", len(opts))
	}
	return opts[0]
}

// Every values case the chart is tested with gives the binary arguments it takes.
func TestChartArgumentsParse(t *testing.T) {
	cases, err := render.Cases(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for name, files := range cases {
		t.Run(name, func(t *testing.T) { parseChart(t, files, nil) })
	}
}

// The values reach the operator's options; a batch window of 0 is no batching, not the controller's default.
func TestChartArgumentsFollowValues(t *testing.T) {
	o := parseChart(t, nil, map[string]any{
		"batchWindow": "0s", "maxConcurrentReconciles": 7, "istio": map[string]any{"apiVersion": "v1beta1"},
		"kubeAPI": map[string]any{"qps": 12, "burst": 34},
	})
	if o.BatchWindow != 0 || o.Controller().BatchWindow >= 0 || o.MaxConcurrentReconciles != 7 || o.IstioAPIVersion != "v1beta1" ||
		o.Manager.QPS != 12 || o.Manager.Burst != 34 || o.ConfigMap.Namespace != render.Namespace {
		t.Fatalf("values read as %+v", o)
	}
	if d := parseChart(t, nil, map[string]any{"batchWindow": "250ms"}); d.Controller().BatchWindow != 250*time.Millisecond {
		t.Fatalf("batch window 250ms read as %s", d.Controller().BatchWindow)
	}
}
