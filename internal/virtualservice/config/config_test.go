package config

import (
	"slices"
	"strings"
	"testing"
)

func TestParseDefaults(t *testing.T) {
	c, err := Parse([]byte("defaultNamespace: production\ndeveloperNamespaces: [dev-alice, dev-bob]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.HeaderName != "x-developer" {
		t.Errorf("headerName %q", c.HeaderName)
	}
	if !slices.Equal(c.ExcludedNamespaces, DefaultExcludedNamespaces) {
		t.Errorf("excludedNamespaces %v", c.ExcludedNamespaces)
	}
	if !slices.Equal(c.Namespaces(), []string{"production", "dev-alice", "dev-bob"}) {
		t.Errorf("namespaces %v", c.Namespaces())
	}
	if !slices.Equal(c.DeveloperRoutes.Gateways, []string{"mesh"}) {
		t.Errorf("developerRoutes.gateways %v, want only the mesh by default", c.DeveloperRoutes.Gateways)
	}
	r, err := c.Template().Render("web")
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "web-virtual-service" || r.Hosts[0] != "web.production.svc.cluster.local" || len(r.DefaultRoutes) != 1 {
		t.Errorf("default template rendered %+v", r)
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]struct{ config, want string }{
		"empty":                  {"", "is empty"},
		"no default namespace":   {"developerNamespaces: [a]", "defaultNamespace is required"},
		"unknown key":            {"defaultNamespace: p\ndeveloperNamespace: [a]", `unknown field "developerNamespace"`},
		"bad namespace":          {"defaultNamespace: Prod", "not a valid namespace name"},
		"duplicate developer":    {"defaultNamespace: p\ndeveloperNamespaces: [a, a]", "listed twice"},
		"developer is default":   {"defaultNamespace: p\ndeveloperNamespaces: [p]", "is the defaultNamespace"},
		"developer excluded":     {"defaultNamespace: p\ndeveloperNamespaces: [kube-system]", "is one of excludedNamespaces"},
		"default excluded":       {"defaultNamespace: istio-system", "is one of excludedNamespaces"},
		"custom exclusion":       {"defaultNamespace: p\nexcludedNamespaces: [dev-x]\ndeveloperNamespaces: [dev-x]", "is one of excludedNamespaces"},
		"upper-case header":      {"defaultNamespace: p\nheaderName: X-Developer", "must be lower case"},
		"header with space":      {"defaultNamespace: p\nheaderName: 'x dev'", "not allowed in an HTTP header name"},
		"unknown placeholder":    {"defaultNamespace: p\nvirtualServiceTemplate: 'metadata: {name: ${service}}'", "unknown placeholder ${service}"},
		"name without service":   {"defaultNamespace: p\nvirtualServiceTemplate: " + quote(tmpl("fixed", "p", "h")), "does not contain ${serviceName}"},
		"namespace not default":  {"defaultNamespace: p\nvirtualServiceTemplate: " + quote(tmpl("${serviceName}", "other", "h")), "must be the defaultNamespace"},
		"wrong kind":             {"defaultNamespace: p\nvirtualServiceTemplate: " + quote("kind: Gateway\n"+tmpl("${serviceName}", "p", "h")), "is not VirtualService"},
		"wrong group":            {"defaultNamespace: p\nvirtualServiceTemplate: " + quote("apiVersion: v1\n"+tmpl("${serviceName}", "p", "h")), "not in group networking.istio.io"},
		"no default route":       {"defaultNamespace: p\nvirtualServiceTemplate: " + quote("metadata: {name: '${serviceName}'}\nspec: {hosts: [h]}"), "spec.http is required"},
		"no hosts":               {"defaultNamespace: p\nvirtualServiceTemplate: " + quote("metadata: {name: '${serviceName}'}\nspec: {http: [{route: []}]}"), "spec.hosts is required"},
		"owner refs in template": {"defaultNamespace: p\nvirtualServiceTemplate: " + quote("metadata: {name: '${serviceName}', ownerReferences: []}\nspec: {hosts: [h], http: [{}]}"), "metadata.ownerReferences is not supported"},
		"bad label":              {"defaultNamespace: p\nvirtualServiceTemplate: " + quote("metadata: {name: '${serviceName}', labels: {a: 'b c'}}\nspec: {hosts: [h], http: [{}]}"), "metadata.labels[a]"},
		"not yaml":               {"defaultNamespace: p\nvirtualServiceTemplate: '{{'", "virtualServiceTemplate"},
		"bad gateway":            {"defaultNamespace: p\ndeveloperRoutes: {gateways: ['Public Gateway']}", "developerRoutes.gateways[0]"},
		"bad source namespace":   {"defaultNamespace: p\ndeveloperRoutes: {sourceNamespaces: [Front_End]}", "developerRoutes.sourceNamespaces[0]"},
		"bad source label":       {"defaultNamespace: p\ndeveloperRoutes: {sourceLabels: {app: 'a b'}}", "developerRoutes.sourceLabels[app]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.config))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestTemplateIsUsed(t *testing.T) {
	text := `apiVersion: networking.istio.io/v1beta1
kind: VirtualService
metadata:
  name: "${serviceName}-vs"
  namespace: "${defaultNamespace}"
  labels:
    service: "${serviceName}"
  annotations:
    team: payments
spec:
  hosts:
  - ${serviceName}
  - ${serviceName}.${defaultNamespace}.svc.cluster.local
  gateways: [mesh]
  http:
  - route:
    - destination:
        host: ${serviceName}.${defaultNamespace}.svc.cluster.local
      weight: 100
`
	c, err := Parse([]byte("defaultNamespace: shop\nvirtualServiceTemplate: " + quote(text)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Template().Render("cart")
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "cart-vs" || r.Labels["service"] != "cart" || r.Annotations["team"] != "payments" {
		t.Errorf("metadata %q %v %v", r.Name, r.Labels, r.Annotations)
	}
	if len(r.Hosts) != 2 || r.Hosts[0] != "cart" || r.Hosts[1] != "cart.shop.svc.cluster.local" {
		t.Errorf("hosts %v", r.Hosts)
	}
	if g, _ := r.ExtraSpec["gateways"].([]any); len(g) != 1 || g[0] != "mesh" {
		t.Errorf("extra spec %v", r.ExtraSpec)
	}
	dest := r.DefaultRoutes[0]["route"].([]any)[0].(map[string]any)
	if dest["weight"] != int64(100) {
		t.Errorf("weight %#v, want int64 100 as in objects read from the API server", dest["weight"])
	}
}

func TestEqual(t *testing.T) {
	a, _ := Parse([]byte("defaultNamespace: p\ndeveloperNamespaces: [a, b]"))
	b, _ := Parse([]byte("defaultNamespace: p\ndeveloperNamespaces: [a, b]\nheaderName: x-developer"))
	c, _ := Parse([]byte("defaultNamespace: p\ndeveloperNamespaces: [b, a]"))
	open, _ := Parse([]byte("defaultNamespace: p\ndeveloperNamespaces: [a, b]\ndeveloperRoutes: {gateways: []}"))
	if a.Equal(open) {
		t.Error("Equal ignores developerRoutes")
	}
	if !a.Equal(b) || a.Equal(c) || a.Equal(nil) {
		t.Error("Equal compares the effective configuration, order of developer namespaces included")
	}
}

func tmpl(name, ns, host string) string {
	return "metadata: {name: '" + name + "', namespace: '" + ns + "'}\nspec: {hosts: [" + host + "], http: [{route: []}]}\n"
}

// quote makes a YAML double-quoted scalar of s.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// TestServiceNamesYAMLWouldRetype: YAML 1.1 reads no, on, y, off, yes, true and null as booleans or null. Those are
// valid Service names; substituted into the text of the template they would become `host: false` and get no working
// VirtualService. Substituted into the parsed template they stay strings.
func TestServiceNamesYAMLWouldRetype(t *testing.T) {
	text := `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: ${serviceName}
  namespace: ${defaultNamespace}
  labels:
    service: ${serviceName}
spec:
  hosts:
  - ${serviceName}
  http:
  - route:
    - destination:
        host: ${serviceName}
`
	c, err := Parse([]byte("defaultNamespace: shop\nvirtualServiceTemplate: " + quote(text)))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"no", "on", "y", "n", "off", "yes", "true", "null", "nan", "1e3", "0x1f"} {
		r, err := c.Template().Render(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		dest := r.DefaultRoutes[0]["route"].([]any)[0].(map[string]any)["destination"].(map[string]any)
		if r.Name != name || r.Labels["service"] != name || r.Hosts[0] != name || dest["host"] != name {
			t.Errorf("%s: name %q, label %q, hosts %#v, destination host %#v: want the string %q everywhere",
				name, r.Name, r.Labels["service"], r.Hosts, dest["host"], name)
		}
	}
}

func TestRenderLeavesTheTemplateUnchanged(t *testing.T) {
	c, err := Parse([]byte("defaultNamespace: shop"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Template().Render("cart")
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Template().Render("web")
	if err != nil {
		t.Fatal(err)
	}
	if first.Name != "cart-virtual-service" || second.Name != "web-virtual-service" || first.Hosts[0] != "cart.shop.svc.cluster.local" {
		t.Errorf("renders %q %v and %q %v", first.Name, first.Hosts, second.Name, second.Hosts)
	}
}
