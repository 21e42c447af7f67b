//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	"github.com/virtual-ingress/virtual-ingress/tests/virtualservice/fixture"
)

// Every test uses its own Service name, so tests do not see each other's VirtualServices.

func TestCreateIsOneWriteOfTheFinalState(t *testing.T) {
	createReady(t, "dev-b", "web")
	createReady(t, "dev-a", "web")
	createReady(t, "dev-c", "web") // dev-c is not a developer namespace (yet)
	createReady(t, "kube-system", "web")
	prod := createReady(t, prodNS, "web")

	vs := waitVS(t, "web-virtual-service", hasRoutes("vso-dev-dev-a", "vso-dev-dev-b", "vso-default"))
	// Generation counts spec writes: 1 means no VirtualService without developer routes was ever stored.
	if g := vs.GetGeneration(); g != 1 {
		t.Errorf("generation %d, want 1 (one write of the final state)", g)
	}
	if l := vs.GetLabels(); l["managed-by"] != "virtualservice-operator" {
		t.Errorf("labels %v", l)
	}
	refs := vs.GetOwnerReferences()
	if len(refs) != 1 || refs[0].UID != prod.UID || refs[0].Kind != "Service" {
		t.Errorf("owner references %+v, want the production Service", refs)
	}
	if hosts, _, _ := unstructured.NestedStringSlice(vs.Object, "spec", "hosts"); !reflect.DeepEqual(hosts, []string{"web.prod.svc.cluster.local"}) {
		t.Errorf("hosts %v", hosts)
	}
	want := map[string]any{
		"name": "vso-dev-dev-a",
		// Only traffic inside the mesh may pick a developer route: not requests arriving through an ingress gateway.
		"match": []any{map[string]any{"headers": map[string]any{"x-developer": map[string]any{"exact": "dev-a"}}, "gateways": []any{"mesh"}}},
		"route": []any{map[string]any{"destination": map[string]any{"host": "web.dev-a.svc.cluster.local", "port": map[string]any{"number": int64(80)}}}},
	}
	if got := httpRoutes(vs)[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("developer route\n got %v\nwant %v", got, want)
	}
	if a := vs.GetAnnotations()["virtualservice-operator.io/developer-routes"]; a != "dev-a,dev-b" {
		t.Errorf("status annotation %q", a)
	}
	waitEvent(t, prodNS, "web", "VirtualServiceCreated", "developer routes [dev-a,dev-b]")
}

func TestDeveloperServiceComesAndGoes(t *testing.T) {
	createReady(t, prodNS, "shop")
	waitVS(t, "shop-virtual-service", hasRoutes("vso-default"))
	createReady(t, "dev-b", "shop")
	waitVS(t, "shop-virtual-service", hasRoutes("vso-dev-dev-b", "vso-default"))
	createReady(t, "dev-a", "shop")
	waitVS(t, "shop-virtual-service", hasRoutes("vso-dev-dev-a", "vso-dev-dev-b", "vso-default"))
	deleteService(t, "dev-b", "shop")
	waitVS(t, "shop-virtual-service", hasRoutes("vso-dev-dev-a", "vso-default"))
	waitEvent(t, prodNS, "shop", "RoutesUpdated", "developer routes [dev-a]")
}

func TestProductionServiceDeleted(t *testing.T) {
	createReady(t, "dev-a", "gone")
	createReady(t, prodNS, "gone")
	waitVS(t, "gone-virtual-service", hasRoutes("vso-dev-dev-a", "vso-default"))
	deleteService(t, prodNS, "gone")
	waitVSGone(t, "gone-virtual-service")
}

func TestNoRouteWithoutReadyEndpoints(t *testing.T) {
	dev := createService(t, fixture.Service("dev-a", "cart", fixture.Port("http", 80)))
	slices := kube.DiscoveryV1().EndpointSlices("dev-a")
	slice, err := slices.Create(t.Context(), fixture.EndpointSlice(dev, "http", 80, false), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	createReady(t, prodNS, "cart")
	vs := waitVS(t, "cart-virtual-service", func(vs *unstructured.Unstructured) error {
		if s := vs.GetAnnotations()["virtualservice-operator.io/skipped-routes"]; !strings.Contains(s, "dev-a: no ready endpoint on port 80") {
			return fmt.Errorf("skipped-routes %q", s)
		}
		return nil
	})
	if err := hasRoutes("vso-default")(vs); err != nil {
		t.Error(err)
	}
	waitEvent(t, prodNS, "cart", "VirtualServiceCreated", "dev-a: no ready endpoint on port 80")

	// A ready endpoint on another port is still no reason to route.
	other := fixture.EndpointSlice(dev, "metrics", 9090, true)
	if _, err := slices.Create(t.Context(), other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice.Endpoints[0].Conditions.Ready = ptrTo(true)
	if _, err := slices.Update(t.Context(), slice, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitVS(t, "cart-virtual-service", hasRoutes("vso-dev-dev-a", "vso-default"))
	slice, err = slices.Get(t.Context(), slice.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slice.Endpoints[0].Conditions.Ready = ptrTo(false)
	if _, err := slices.Update(t.Context(), slice, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitVS(t, "cart-virtual-service", hasRoutes("vso-default"))
}

func TestPortsFollowTheDeveloperService(t *testing.T) {
	createReady(t, prodNS, "api", fixture.Port("http", 80), fixture.Port("grpc", 9090))
	createReady(t, "dev-a", "api", fixture.Port("http", 8080), fixture.Port("grpc", 9090))
	vs := waitVS(t, "api-virtual-service", hasRoutes("vso-dev-dev-a-80", "vso-dev-dev-a-9090", "vso-default"))
	first := httpRoutes(vs)[0]
	dest := first["route"].([]any)[0].(map[string]any)["destination"].(map[string]any)
	match := first["match"].([]any)[0].(map[string]any)
	if dest["port"].(map[string]any)["number"] != int64(8080) || match["port"] != int64(80) {
		t.Errorf("route for production port 80: match %v destination %v, want port 80 sent to the developer's 8080", match, dest)
	}
}

func TestForeignRoutesAndFieldsAreKept(t *testing.T) {
	createReady(t, prodNS, "blog")
	waitVS(t, "blog-virtual-service", hasRoutes("vso-default"))
	vsClient := dyn.Resource(fixture.VirtualServices).Namespace(prodNS)
	canary := map[string]any{
		"name":  "canary",
		"match": []any{map[string]any{"uri": map[string]any{"prefix": "/beta"}}},
		"route": []any{map[string]any{"destination": map[string]any{"host": "blog-beta.prod.svc.cluster.local"}}},
	}
	// Someone else edits the VirtualService (kubectl edit style): a route before the default one, a label, a field.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vs, err := getVS(t.Context(), prodNS, "blog-virtual-service")
		if err != nil {
			return err
		}
		http := httpRoutes(vs)
		routes := []any{canary}
		for _, r := range http {
			routes = append(routes, r)
		}
		_ = unstructured.SetNestedSlice(vs.Object, routes, "spec", "http")
		_ = unstructured.SetNestedStringSlice(vs.Object, []string{"mesh", "istio-system/public"}, "spec", "gateways")
		labels := vs.GetLabels()
		labels["team"] = "content"
		vs.SetLabels(labels)
		_, err = vsClient.Update(t.Context(), vs, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	createReady(t, "dev-b", "blog")
	vs := waitVS(t, "blog-virtual-service", hasRoutes("vso-dev-dev-b", "canary", "vso-default"))
	if got := httpRoutes(vs)[1]; !reflect.DeepEqual(got, canary) {
		t.Errorf("foreign route changed: %v", got)
	}
	if g, _, _ := unstructured.NestedStringSlice(vs.Object, "spec", "gateways"); len(g) != 2 || vs.GetLabels()["team"] != "content" {
		t.Errorf("foreign fields lost: gateways %v labels %v", g, vs.GetLabels())
	}
	// An operator route edited by hand is put back.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vs, err := getVS(t.Context(), prodNS, "blog-virtual-service")
		if err != nil {
			return err
		}
		routes, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
		_ = unstructured.SetNestedSlice(vs.Object, routes[1:], "spec", "http") // drops vso-dev-dev-b
		_, err = vsClient.Update(t.Context(), vs, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitVS(t, "blog-virtual-service", hasRoutes("vso-dev-dev-b", "canary", "vso-default"))
}

func TestConcurrentWriterConflictIsRetried(t *testing.T) {
	createReady(t, prodNS, "race")
	waitVS(t, "race-virtual-service", hasRoutes("vso-default"))
	before := metric(t, "virtualservice_operator_write_conflicts_total")
	vsClient := dyn.Resource(fixture.VirtualServices).Namespace(prodNS)
	injected := make(chan error, 1)
	conflicts.arm("race-virtual-service", func() {
		// Runs while the operator's write, based on what it just read, is in flight.
		vs, err := vsClient.Get(context.Background(), "race-virtual-service", metav1.GetOptions{})
		if err == nil {
			routes, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
			foreign := map[string]any{"name": "mirror", "route": []any{map[string]any{"destination": map[string]any{"host": "race-shadow"}}}}
			_ = unstructured.SetNestedSlice(vs.Object, append([]any{foreign}, routes...), "spec", "http")
			_, err = vsClient.Update(context.Background(), vs, metav1.UpdateOptions{FieldManager: "concurrent-writer"})
		}
		injected <- err
	})
	createReady(t, "dev-a", "race")
	if err := <-injected; err != nil {
		t.Fatalf("concurrent write: %v", err)
	}
	waitVS(t, "race-virtual-service", hasRoutes("vso-dev-dev-a", "mirror", "vso-default"))
	if after := metric(t, "virtualservice_operator_write_conflicts_total"); after <= before {
		t.Errorf("write_conflicts_total %v -> %v: the operator's write did not conflict", before, after)
	}
}

func TestServiceInExcludedOrUnlistedNamespaceIsIgnored(t *testing.T) {
	createReady(t, "kube-system", "lonely")
	createReady(t, "dev-c", "lonely")
	createReady(t, prodNS, "lonely")
	waitVS(t, "lonely-virtual-service", hasRoutes("vso-default"))
	// A Service in an excluded namespace gets no VirtualService of its own either.
	waitEvent(t, prodNS, "lonely", "VirtualServiceCreated", "developer routes []")
	list, err := dyn.Resource(fixture.VirtualServices).Namespace("").List(t.Context(), metav1.ListOptions{LabelSelector: "managed-by=virtualservice-operator"})
	if err != nil {
		t.Fatal(err)
	}
	for _, vs := range list.Items {
		if vs.GetNamespace() != prodNS && vs.GetNamespace() != "helm-prod" {
			t.Errorf("VirtualService %s/%s outside the production namespaces", vs.GetNamespace(), vs.GetName())
		}
	}
}

func TestVirtualServiceOfSomeoneElseIsLeftAlone(t *testing.T) {
	theirs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
		"metadata": map[string]any{"name": "legacy-virtual-service", "namespace": prodNS},
		"spec":     map[string]any{"hosts": []any{"legacy"}, "http": []any{map[string]any{"route": []any{map[string]any{"destination": map[string]any{"host": "legacy"}}}}}},
	}}
	created, err := dyn.Resource(fixture.VirtualServices).Namespace(prodNS).Create(t.Context(), theirs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	createReady(t, "dev-a", "legacy")
	createReady(t, prodNS, "legacy")
	waitEvent(t, prodNS, "legacy", "VirtualServiceNotManaged", "legacy-virtual-service exists")
	deleteService(t, prodNS, "legacy")
	// Give the operator the deletion to act on, then check its effect through a Service it does handle.
	createReady(t, prodNS, "legacy-witness")
	waitVS(t, "legacy-witness-virtual-service", hasRoutes("vso-default"))
	got, err := getVS(t.Context(), prodNS, "legacy-virtual-service")
	if err != nil {
		t.Fatalf("the foreign VirtualService was deleted: %v", err)
	}
	if got.GetResourceVersion() != created.GetResourceVersion() {
		t.Errorf("the foreign VirtualService was modified: %v", got.Object)
	}
}

func TestConfigMapEdit(t *testing.T) {
	restoreConfig(t)
	createReady(t, prodNS, "conf")
	createReady(t, "dev-a", "conf")
	createReady(t, "dev-c", "conf")
	waitVS(t, "conf-virtual-service", hasRoutes("vso-dev-dev-a", "vso-default"))
	reloads := metric(t, "virtualservice_operator_config_reloads_total", `result="applied"`)

	// A namespace added (dev-c, never watched before) and the header renamed, without a restart.
	setConfig(t, "defaultNamespace: prod\ndeveloperNamespaces: [dev-c, dev-a, dev-b]\nheaderName: x-dev\n")
	vs := waitVS(t, "conf-virtual-service", hasRoutes("vso-dev-dev-c", "vso-dev-dev-a", "vso-default"))
	headers := httpRoutes(vs)[0]["match"].([]any)[0].(map[string]any)["headers"].(map[string]any)
	if _, ok := headers["x-dev"]; !ok {
		t.Errorf("match headers %v, want x-dev", headers)
	}
	// Every other production Service follows too.
	waitVS(t, "web-virtual-service", func(vs *unstructured.Unstructured) error {
		return hasRoutes("vso-dev-dev-c", "vso-dev-dev-a", "vso-dev-dev-b", "vso-default")(vs)
	})
	if r := metric(t, "virtualservice_operator_config_reloads_total", `result="applied"`); r <= reloads {
		t.Errorf("config_reloads_total{result=applied} did not grow: %v -> %v", reloads, r)
	}

	// A namespace removed, and a template that renames the object: the old one is the operator's to delete.
	setConfig(t, `defaultNamespace: prod
developerNamespaces: [dev-c]
virtualServiceTemplate: |
  metadata:
    name: ${serviceName}-routes
    labels: {app: "${serviceName}"}
  spec:
    hosts: [${serviceName}]
    http:
    - route:
      - destination: {host: ${serviceName}}
`)
	vs = waitVS(t, "conf-routes", hasRoutes("vso-dev-dev-c", "vso-default"))
	if vs.GetLabels()["app"] != "conf" {
		t.Errorf("template labels not applied: %v", vs.GetLabels())
	}
	if hosts, _, _ := unstructured.NestedStringSlice(vs.Object, "spec", "hosts"); !reflect.DeepEqual(hosts, []string{"conf"}) {
		t.Errorf("hosts %v, want the template's", hosts)
	}
	waitVSGone(t, "conf-virtual-service")
}

func TestInvalidConfigMapKeepsTheLastGoodOne(t *testing.T) {
	restoreConfig(t)
	createReady(t, prodNS, "keep")
	waitVS(t, "keep-virtual-service", hasRoutes("vso-default"))

	setConfig(t, "defaultNamespace: prod\ndeveloperNamespaces: [dev-a, kube-system]\nheaderName: X-Dev\n")
	waitEvent(t, operatorNS, configName, "InvalidConfig", `headerName "X-Dev" must be lower case`)
	eventually(t, "readyz reporting the invalid configuration", func(context.Context) error {
		code, body, err := httpGet(op.probeURL + "/readyz?verbose")
		if err != nil {
			return err
		}
		if code != http.StatusInternalServerError || !strings.Contains(body, "config failed") {
			return fmt.Errorf("readyz %d: %s", code, body)
		}
		return nil
	})
	if v := metric(t, "virtualservice_operator_config_valid"); v != 0 {
		t.Errorf("config_valid %v, want 0", v)
	}
	// The last good configuration is still in force: a new developer Service gets a route with the old header.
	createReady(t, "dev-a", "keep")
	vs := waitVS(t, "keep-virtual-service", hasRoutes("vso-dev-dev-a", "vso-default"))
	headers := httpRoutes(vs)[0]["match"].([]any)[0].(map[string]any)["headers"].(map[string]any)
	if _, ok := headers["x-developer"]; !ok {
		t.Errorf("headers %v, want the last good configuration's x-developer", headers)
	}

	setConfig(t, initialConf)
	eventually(t, "readyz after the fix", func(context.Context) error {
		if code, body, err := httpGet(op.probeURL + "/readyz"); err != nil || code != http.StatusOK {
			return fmt.Errorf("readyz %d %w: %s", code, err, body)
		}
		return nil
	})
}

func TestObservability(t *testing.T) {
	if code, _, err := httpGet(op.probeURL + "/healthz"); err != nil || code != http.StatusOK {
		t.Errorf("healthz: %d %v", code, err)
	}
	// The metrics name production Services: only callers the API server authenticates and authorises get them.
	if code, _, err := httpGet(op.metricsURL); err != nil || code != http.StatusUnauthorized {
		t.Errorf("metrics without a token: %d %v, want 401", code, err)
	}
	stranger, err := cluster.ServiceAccountConfig(t.Context(), operatorNS, "stranger")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, err := httpGetAs(op.metricsURL, stranger.BearerToken); err != nil || code != http.StatusForbidden {
		t.Errorf("metrics with a token not allowed GET /metrics: %d %v, want 403", code, err)
	}
	code, body, err := httpGetAs(op.metricsURL, metricsToken)
	if err != nil || code != http.StatusOK {
		t.Fatalf("metrics: %d %v", code, err)
	}
	for _, name := range []string{
		"controller_runtime_reconcile_total", "workqueue_depth", "rest_client_requests_total",
		"virtualservice_operator_reconcile_results_total", "virtualservice_operator_developer_routes",
		"virtualservice_operator_config_reloads_total", "virtualservice_operator_virtualservice_writes_total",
	} {
		if !strings.Contains(body, "\n"+name) {
			t.Errorf("metrics lack %s", name)
		}
	}
	createReady(t, "dev-b", "metered")
	createReady(t, prodNS, "metered")
	waitVS(t, "metered-virtual-service", hasRoutes("vso-dev-dev-b", "vso-default"))
	eventually(t, "developer_routes gauge", func(context.Context) error {
		if v := metric(t, "virtualservice_operator_developer_routes", `service="metered"`); v != 1 {
			return fmt.Errorf("developer_routes{service=metered} = %v", v)
		}
		return nil
	})
	lease, err := kube.CoordinationV1().Leases(operatorNS).Get(t.Context(), "virtualservice-operator", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("leader election Lease: %v %+v", err, lease)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestDeveloperRoutesExposure: developer routes match only mesh traffic by default; a ConfigMap edit opens them to a
// named ingress gateway and narrows them to one source namespace, and the VirtualService follows without a restart.
func TestDeveloperRoutesExposure(t *testing.T) {
	restoreConfig(t)
	createReady(t, prodNS, "exposed")
	createReady(t, "dev-a", "exposed")
	matchOf := func(vs *unstructured.Unstructured) []any {
		return httpRoutes(vs)[0]["match"].([]any)
	}
	vs := waitVS(t, "exposed-virtual-service", hasRoutes("vso-dev-dev-a", "vso-default"))
	if got := matchOf(vs); len(got) != 1 || !reflect.DeepEqual(got[0].(map[string]any)["gateways"], []any{"mesh"}) {
		t.Fatalf("default developer route match %v, want gateways [mesh]", got)
	}

	setConfig(t, initialConf+"developerRoutes:\n  gateways: [mesh, istio-system/public]\n  sourceNamespaces: [frontend]\n")
	waitVS(t, "exposed-virtual-service", func(vs *unstructured.Unstructured) error {
		got := matchOf(vs)
		want := []any{map[string]any{
			"headers":         map[string]any{"x-developer": map[string]any{"exact": "dev-a"}},
			"gateways":        []any{"mesh", "istio-system/public"},
			"sourceNamespace": "frontend",
		}}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("developer route match %v, want %v", got, want)
		}
		return nil
	})

	// Back to the default, in force before the test ends: a reconfiguration still running when the suite stops the
	// operator would hold up its shutdown.
	setConfig(t, initialConf)
	waitVS(t, "exposed-virtual-service", func(vs *unstructured.Unstructured) error {
		if got := matchOf(vs); len(got) != 1 || got[0].(map[string]any)["sourceNamespace"] != nil {
			return fmt.Errorf("developer route match %v, want the default again", got)
		}
		return nil
	})
}
