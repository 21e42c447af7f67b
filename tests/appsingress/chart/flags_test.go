// Package chart checks renders of the apps-ingress-operator chart that golden files cannot: that the binary takes
// the arguments the chart gives it.
package chart

import (
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/attachment"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/filesync"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/options"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

const chartDir = "../../../charts/apps-ingress-operator"

// parsed are the chart's containers that run the operator's image, their arguments parsed by the binary's own flags.
type parsed struct {
	operator options.Options
	syncers  []filesync.Options
	// attachmentChecks are the check-attachments init containers' options.
	attachmentChecks []attachment.Options
}

// parseChart renders the chart and parses every container that runs the operator's image: the operator with its
// flags, the config sidecars and init containers with sync-files'. An unknown flag, a stray argument or options the
// binary would refuse fail the test.
func parseChart(t *testing.T, valuesFiles []string, values map[string]any) parsed {
	t.Helper()
	docs, err := render.Render(chartDir, valuesFiles, values)
	if err != nil {
		t.Fatal(err)
	}
	// What the chart's env gives every one of them.
	t.Setenv("POD_NAMESPACE", render.Namespace)
	containers := render.Containers(docs)
	image := ""
	for _, c := range containers {
		if c.Object.GetKind() == "Deployment" && c.Name == "operator" {
			image = c.Image
		}
	}
	if image == "" {
		t.Fatal("no operator container rendered")
	}
	var p parsed
	ops := 0
	for _, c := range containers {
		if c.Image != image {
			continue
		}
		if len(c.Args) > 0 && c.Args[0] == "check-attachments" {
			var o attachment.Options
			fs := flag.NewFlagSet("check-attachments", flag.ContinueOnError)
			o.BindFlags(fs)
			if err := render.ParseArgs(fs, c.Args[1:]); err != nil {
				t.Fatalf("%s: %v", c, err)
			}
			p.attachmentChecks = append(p.attachmentChecks, o)
			continue
		}
		if len(c.Args) > 0 && c.Args[0] == "sync-files" {
			var o filesync.Options
			fs := flag.NewFlagSet("sync-files", flag.ContinueOnError)
			o.BindFlags(fs)
			if err := render.ParseArgs(fs, c.Args[1:]); err != nil {
				t.Fatalf("%s: %v", c, err)
			}
			if err := o.Validate(); err != nil {
				t.Fatalf("%s: %v", c, err)
			}
			p.syncers = append(p.syncers, o)
			continue
		}
		fs := flag.NewFlagSet("apps-ingress-operator", flag.ContinueOnError)
		p.operator.BindFlags(fs)
		if err := render.ParseArgs(fs, c.Args); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if err := p.operator.Validate(); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		ops++
	}
	if ops != 1 {
		t.Fatalf("%d operator containers", ops)
	}
	return p
}

// Every values case the chart is tested with gives the binary arguments it takes, and the sidecars read the
// ConfigMaps, and as many shards, as the operator writes.
func TestChartArgumentsParse(t *testing.T) {
	cases, err := render.Cases(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for file, files := range cases {
		for name, values := range map[string]map[string]any{
			"as is":       nil,
			"hostNetwork": {"dns": map[string]any{"hostNetwork": true, "vlanAddresses": []any{"10.1.0.5", "eth1"}}},
			"no sidecars": {"configSync": map[string]any{"enabled": false}, "configShards": 2},
			"leader":      {"replicaCount": 3, "leaderElection": map[string]any{"enabled": true}, "logLevel": "debug"},
		} {
			t.Run(file+"/"+name, func(t *testing.T) {
				p := parseChart(t, files, values)
				for _, s := range p.syncers {
					if s.Shards != p.operator.ConfigShards || (s.ConfigMap != p.operator.DNSConfigMap && s.ConfigMap != p.operator.ProxyConfigMap) {
						t.Errorf("a sidecar reads %s with %d shards; the operator writes %s and %s with %d",
							s.ConfigMap, s.Shards, p.operator.DNSConfigMap, p.operator.ProxyConfigMap, p.operator.ConfigShards)
					}
				}
			})
		}
	}
}

// The values reach the operator's options.
func TestChartArgumentsFollowValues(t *testing.T) {
	p := parseChart(t, nil, map[string]any{
		"dns": map[string]any{
			"hostNetwork": true, "vlanAddresses": []any{"10.1.0.5", "eth1"},
			"upstreams": []any{"10.0.0.53", "10.0.0.54"}, "proxyIPs": []any{"10.96.0.10"}, "zoneReloadInterval": "2s",
			"repairAfter": "45s",
		},
		"hostedClusterNamespaces": []any{"clusters", "lab"},
		"configShards":            3,
		"recheckInterval":         "30s",
	})
	o := p.operator
	if o.DNSVLANPort != 53 || !slices.Equal(o.DNSVLANBind, []string{"10.1.0.5", "eth1"}) ||
		!slices.Equal(o.DNSUpstreams, []string{"10.0.0.53", "10.0.0.54"}) || !slices.Equal(o.ProxyIPs, []string{"10.96.0.10"}) ||
		!slices.Equal(o.SecretNamespaces, []string{"clusters", "lab"}) || o.ConfigShards != 3 ||
		o.DNSZoneReloadInterval != 2*time.Second || o.DNSRepairAfter != 45*time.Second || o.RecheckInterval != 30*time.Second ||
		o.Namespace != render.Namespace {
		t.Fatalf("values read as %+v", o)
	}
	if len(p.syncers) != 4 {
		t.Fatalf("%d sync-files containers, want a sidecar and an init container for each server", len(p.syncers))
	}
	if len(p.attachmentChecks) != 0 {
		t.Fatalf("%d check-attachments containers without any secondary network", len(p.attachmentChecks))
	}
	for _, s := range p.syncers {
		if s.ConfigMap == o.DNSConfigMap && s.Dir != o.DNSZoneDir {
			t.Errorf("the DNS sidecar writes into %s, the Corefile names %s", s.Dir, o.DNSZoneDir)
		}
	}
}

// A server asking Multus for a secondary network checks, before it starts, that the network is attached; one that
// asks for none does not.
func TestSecondaryNetworksAreCheckedBeforeTheServersStart(t *testing.T) {
	networks := map[string]any{attachment.NetworksAnnotation: "vlan-dns"}
	for _, tc := range []struct {
		values map[string]any
		want   int
	}{
		{map[string]any{"dns": map[string]any{"podAnnotations": networks}}, 1},
		{map[string]any{"dns": map[string]any{"podAnnotations": networks}, "proxy": map[string]any{"podAnnotations": networks}}, 2},
		{map[string]any{"dns": map[string]any{"podAnnotations": networks}, "configSync": map[string]any{"enabled": false}}, 1},
		{map[string]any{"dns": map[string]any{"podAnnotations": map[string]any{"example.com/other": "x"}}}, 0},
	} {
		p := parseChart(t, nil, tc.values)
		if len(p.attachmentChecks) != tc.want {
			t.Errorf("%v: %d check-attachments containers, want %d", tc.values, len(p.attachmentChecks), tc.want)
		}
		for _, o := range p.attachmentChecks {
			if o.Annotations != "/etc/podinfo/annotations" {
				t.Errorf("check-attachments reads %s, where the chart mounts no annotations", o.Annotations)
			}
		}
	}
}
