package chart

import (
	"flag"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/options"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

// chartFlags renders the chart with values and parses the API container's arguments with the binary's own flags:
// an argument the binary does not know fails the test, as it would fail the Pod.
func chartFlags(t *testing.T, values map[string]any) options.Options {
	t.Helper()
	docs, err := render.Render(chartDir, nil, values)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.Object.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(d.Object.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		var f options.Options
		fs := flag.NewFlagSet("ssvirt-api", flag.ContinueOnError)
		f.BindFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("the chart's arguments %q: %v", args, err)
		}
		if fs.NArg() != 0 {
			t.Fatalf("the chart's arguments leave %q unparsed", fs.Args())
		}
		return f
	}
	t.Fatal("no Deployment")
	return options.Options{}
}

// Every argument the chart passes is one of ssvirt-api's flags, and the values reach them.
func TestChartArgumentsAreFlags(t *testing.T) {
	f := chartFlags(t, nil)
	if f.DatabaseDriver != "sqlite" || f.SQLitePath != "/data/ssvirt.db" || f.Manager.LeaderElect || f.Kube.TemplateNamespace != "openshift" {
		t.Errorf("defaults: %+v", f)
	}
	f = chartFlags(t, map[string]any{
		"database":     map[string]any{"driver": "postgres", "existingSecret": "db"},
		"replicaCount": 2, "resyncPeriod": "3m", "powerTimeout": "7m", "sessionLifetime": "2h",
		"templateNamespace": "catalog", "logLevel": "debug", "kubeAPI": map[string]any{"qps": 7, "burst": 9},
	})
	if f.DatabaseDriver != "postgres" || !f.Manager.LeaderElect || f.Kube.ResyncPeriod != 3*time.Minute ||
		f.Kube.PowerTimeout != 7*time.Minute || f.SessionLifetime != 2*time.Hour || f.Kube.TemplateNamespace != "catalog" ||
		f.Manager.LogLevel != "debug" || f.Manager.QPS != 7 || f.Manager.Burst != 9 {
		t.Errorf("postgres values: %+v", f)
	}
}
