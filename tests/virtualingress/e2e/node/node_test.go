//go:build node

package node_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualingress/traffic"
)

// The node tier of virtual-ingress (go test -tags node, make e2e-node): the chart installed from a registry with `helm
// install oci:// --wait` and upgraded to the next release, its status controller running as the chart's Pod from the
// image the node pulled, with the chart's RBAC and nothing granted by the test, on Kyverno installed as users install
// it: from its own chart with `helm install --wait`, its controllers as Pods on the node (two admission replicas
// behind its Service), at the release before the pinned one, which TestChartOnNode upgrades across the patch.
var node *nodetier.Env

const (
	chart          = "virtual-ingress"
	controllerName = chart + "-controller"
	controllerPods = "app.kubernetes.io/component=status-controller"
)

func TestMain(m *testing.M) {
	os.Exit(nodetier.Main(m, "virtualingress", true, func(ctx context.Context, e *nodetier.Env) error {
		node = e
		return e.Cluster.ApplyGatewayAPICRDs(ctx)
	}, func(o *devcluster.Options) { o.KyvernoPrevious = true }))
}

// TestChartOnNode installs the previous release with one engine and resolves 1,000 VirtualIngresses, one of them
// served through Traefik, upgrades to the current release with requests flowing (none may fail, no VirtualIngress may
// be written nor Ingress recreated), then Kyverno's chart to the pinned release under the same conditions with a
// GitOps sync running, proves the controller Pod's work and the traffic, and what users see when a Pod
// of the controller or of Kyverno goes, switches the engine with `helm upgrade --wait` under the same conditions and
// proves the work and the traffic again.
func TestChartOnNode(t *testing.T) {
	controller, err := traffic.Start(context.Background(), node.Cluster, node.Cluster.Dir(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	trafficController = controller
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("traefik's log:\n%s", controller.Logs())
		}
		_ = controller.Stop()
	})
	release := node.InstallPrevious(t, chart, map[string]any{"policy": map[string]any{"engine": policyengine.GeneratingPolicy}})
	waitPolicies(t)
	resolved := resolveBeforeUpgrade(t)
	during := resolved.sendRequests()
	release.UpgradeToCurrent(t)
	waitPolicies(t)
	upgrade := fmt.Sprintf("helm upgrade %s → %s", nodetier.PreviousVersion, nodetier.CurrentVersion)
	resolved.unchanged(t, upgrade)
	during.check(t, upgrade)
	node.AssertHardened(t, chart, controllerPods)
	node.HelmTest(t, release.Release)
	upgradeKyvernoUnderLoad(t, resolved)

	t.Run(policyengine.GeneratingPolicy, func(t *testing.T) { readyThroughThePod(t) })
	t.Run(policyengine.GeneratingPolicy+" traffic", testTraffic)
	t.Run("metrics answer an authorised token only", testMetricsAuthorised)
	t.Run("the controller Pod deleted during 200 creations", testPodDeletedMidway)
	t.Run("a Kyverno admission Pod deleted during a GitOps sync of 200 pairs", testAdmissionPodDeleted)
	t.Run("Kyverno's background controller Pod deleted during 200 creations", testBackgroundPodDeleted)

	during = resolved.sendRequests()
	release.Upgrade(t, "to "+policyengine.ClusterPolicy, map[string]any{"policy": map[string]any{"engine": policyengine.ClusterPolicy}})
	waitPolicies(t)
	resolved.unchanged(t, "the engine switch to "+policyengine.ClusterPolicy)
	during.check(t, "the engine switch to "+policyengine.ClusterPolicy)
	node.HelmTest(t, release.Release)
	t.Run(policyengine.ClusterPolicy, func(t *testing.T) { readyThroughThePod(t) })
	t.Run(policyengine.ClusterPolicy+" traffic", testTraffic)
}

func waitPolicies(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := node.Cluster.WaitPoliciesReady(ctx, "app.kubernetes.io/part-of="+chart); err != nil {
		t.Fatal(err)
	}
	if err := virtualingress.WaitAdmissionReady(ctx, node.Dyn, time.Minute); err != nil {
		t.Fatal(err)
	}
}

func newNodeNamespace(t *testing.T) string {
	t.Helper()
	return node.Namespace(t, "node-vi-")
}

func createLabelledService(t *testing.T, ns string, labels map[string]string) {
	t.Helper()
	_, err := node.Kube.CoreV1().Services(ns).Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "a", Labels: labels},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// waitCondition waits until what (get reads it) is Ready=status with reason, and messageHas in the message.
func waitCondition(t *testing.T, what string, get func() (*unstructured.Unstructured, error), status, reason, messageHas string) {
	t.Helper()
	poll.Until(t, 2*time.Minute, fmt.Sprintf("%s Ready=%s %s", what, status, reason), func() (bool, string, error) {
		obj, err := get()
		if err != nil {
			return false, "", err
		}
		s, r, msg := virtualingress.Condition(obj, "Ready")
		return s == status && r == reason && strings.Contains(msg, messageHas), s + " " + r + ": " + msg, nil
	})
}

// readyThroughThePod: a VirtualIngress and a VirtualHTTPRoute become Ready=True, which only the controller Pod
// writes; the route once its Gateway has accepted it.
func readyThroughThePod(t *testing.T) {
	ctx := context.Background()
	ns := newNodeNamespace(t)
	labels := map[string]string{"tenant-service": "coder"}
	// A Service with a Pod behind it: Traefik resolves a route's backend only to endpoints.
	if err := traffic.RunBackend(ctx, node.Kube, ns, "coder"); err != nil {
		t.Fatal(err)
	}
	if _, err := node.Kube.CoreV1().Services(ns).Create(ctx, traffic.TenantService(labels, "coder"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	vis := node.Dyn.Resource(virtualingress.GVR).Namespace(ns)
	if _, err := vis.Create(ctx, virtualingress.New(ns, "coder", virtualingress.CoderSpec(labels)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, "VirtualIngress", func() (*unstructured.Unstructured, error) {
		return vis.Get(ctx, "coder", metav1.GetOptions{})
	}, "True", "IngressUpToDate", "")

	routes := node.Dyn.Resource(virtualingress.RouteGVR).Namespace(ns)
	if _, err := routes.Create(ctx, virtualingress.NewRoute(ns, "coder", virtualingress.CoderRouteSpec(labels)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	getRoute := func() (*unstructured.Unstructured, error) { return routes.Get(ctx, "coder", metav1.GetOptions{}) }
	waitCondition(t, "VirtualHTTPRoute", getRoute, "False", "NoGatewayStatus", "")
	// Its parent Gateway, served by Traefik: the route is Ready once Traefik accepted it.
	gateway := traffic.NewGateway(ns, "tenant-root", []any{map[string]any{"name": "web",
		"port": trafficController.HTTPPort, "protocol": "HTTP", "hostname": "coder.enigma.vgijssel.nl"}})
	if _, err := node.Dyn.Resource(traffic.GatewayGVR).Namespace(ns).Create(ctx, gateway, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, "VirtualHTTPRoute", getRoute, "True", "HTTPRouteUpToDate", "")
}

// testMetricsAuthorised: the metrics Service answers over HTTPS only a token the API server authorises for GET
// /metrics (the chart's metrics-reader ClusterRole), from the host through the Service's ClusterIP.
func testMetricsAuthorised(t *testing.T) {
	ctx := context.Background()
	ns := newNodeNamespace(t)
	svc, err := node.Kube.CoreV1().Services(chart).Get(ctx, controllerName+"-metrics", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sa := range []string{"scraper", "stranger"} {
		if _, err := node.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "node-test-scraper-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: controllerName + "-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "scraper"}},
	}
	created, err := node.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = node.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), created.Name, metav1.DeleteOptions{})
	})

	url := fmt.Sprintf("https://%s:%d/metrics", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	scrape := func(sa string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if sa != "" {
			cfg, err := node.Cluster.ServiceAccountConfig(ctx, ns, sa)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
		}
		// The controller serves a self-signed certificate, as controller-runtime does without one configured.
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // see above
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s as %q: %v", url, sa, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	poll.Until(t, 30*time.Second, "metrics for the scraper (RBAC is cached briefly)", func() (bool, string, error) {
		code, body := scrape("scraper")
		return code == http.StatusOK && strings.Contains(body, "controller_runtime_reconcile_total"), fmt.Sprint(code), nil
	})
	if code, _ := scrape("stranger"); code != http.StatusForbidden {
		t.Errorf("a token without the metrics-reader role got %d, want 403", code)
	}
	if code, _ := scrape(""); code != http.StatusUnauthorized {
		t.Errorf("no token got %d, want 401", code)
	}
}
