//go:build node

package node_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes/routestest"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/nodetier"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

// The node tier of apps-ingress-operator (go test -tags node, make e2e-node): the chart installed with `helm install
// --wait` on the management cluster's node, the operator and the chart's own CoreDNS and HAProxy Deployments as Pods.
// Upstream's CoreDNS and HAProxy images cannot be pulled here, so the same programs the other tiers run (CoreDNS
// from its pinned module, Debian's HAProxy) are imported under the names and tags the chart's values give.
var (
	node *nodetier.Env
	env  *localenv.Env
)

const (
	nodeChart  = "apps-ingress-operator"
	hostedName = "hosted"
)

func TestMain(m *testing.M) {
	os.Exit(nodetier.Run(m, func(ctx context.Context, dir string) (*devcluster.Cluster, func() error, error) {
		var err error
		// A management cluster with the node, a hosted cluster serving on the node's address, MetalLB's controller,
		// a HostedCluster and its kubeconfig Secret: the operator's Pod has what it has in a real management cluster.
		if env, err = localenv.StartWith(ctx, dir, localenv.Options{Node: true}); err != nil {
			if env != nil {
				env.Stop()
			}
			return nil, nil, err
		}
		return env.Mgmt, func() error { env.Stop(); return nil }, nil
	}, "appsingress", func(ctx context.Context, e *nodetier.Env) error {
		node = e
		return nil
	}))
}

// installed is the chart's release: installed once, by the first test that needs it, and upgraded by the others.
var installed *nodetier.Installed

func chartRelease(t *testing.T) *nodetier.Installed {
	t.Helper()
	if installed == nil {
		importUpstreamImages(t)
		installed = node.Install(t, nodeChart, nil)
	}
	return installed
}

func TestChartOnNode(t *testing.T) {
	release := chartRelease(t)
	for _, component := range []string{"operator", "proxy"} {
		node.AssertHardened(t, nodeChart, "app.kubernetes.io/component="+component)
	}
	// CoreDNS keeps the one capability its binary carries as a file capability.
	node.AssertHardened(t, nodeChart, "app.kubernetes.io/component=dns", nodetier.CapNetBindService)
	node.HelmTest(t, release.Release)
	ctx := context.Background()
	configSidecarsReadOnlyTheirOwn(t)
	if err := env.CreateAppsIngress(ctx, hostedName, localenv.Ports{RouterHTTP: 80, RouterHTTPS: 443}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 2*time.Minute, "AppsIngress Ready", func() (bool, string, error) {
		ai, err := node.Dyn.Resource(localenv.AppsIngressGVR).Namespace(localenv.ClustersNS).Get(ctx, hostedName, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		phase, _, _ := unstructured.NestedString(ai.Object, "status", "phase")
		return phase == "Ready", phase, nil
	})

	// From the pod network: the chart's CoreDNS answers the hosted cluster's names with the proxy Service, and the
	// chart's HAProxy passes a TLS connection for the API name through to the hosted API server.
	client := node.RunEchoPod(t, "default", "probe", nil)
	dnsSvc, err := node.Kube.CoreV1().Services(nodeChart).Get(ctx, nodeChart+"-dns", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	proxySvc, err := node.Kube.CoreV1().Services(nodeChart).Get(ctx, nodeChart+"-proxy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	apiName := "api." + hostedName + "." + localenv.BaseDomain
	for _, name := range []string{apiName, "console.apps." + hostedName + "." + localenv.BaseDomain} {
		poll.Until(t, 3*time.Minute, "the chart's CoreDNS answering "+name+" from a Pod", func() (bool, string, error) {
			out, err := node.Cluster.Exec(ctx, client.Namespace, client.Name, "echo", "/usr/local/bin/echo", "lookup", name,
				"--server", dnsSvc.Spec.ClusterIP+":53")
			return err == nil && strings.TrimSpace(out) == proxySvc.Spec.ClusterIP, out, err
		})
	}
	t.Cleanup(func() {
		if t.Failed() {
			files, _, err := localenv.ConfigFiles(ctx, node.Kube, nodeChart, nodeChart+"-proxy", 4)
			t.Logf("HAProxy's ConfigMaps (%v):\n%s", err, routestest.Dump(files))
		}
	})
	poll.Until(t, 3*time.Minute, "the hosted API server through the chart's HAProxy", func() (bool, string, error) {
		out, err := node.Cluster.Exec(ctx, client.Namespace, client.Name, "echo", "/usr/local/bin/echo", "get",
			"https://"+apiName+":6443/readyz", "--connect", proxySvc.Spec.ClusterIP+":6443")
		return err == nil && strings.HasPrefix(out, "200 OK") && strings.HasSuffix(out, "ok"), out, err
	})
}

// importUpstreamImages is localenv.ImportUpstreamImages for a test.
func importUpstreamImages(t *testing.T) {
	t.Helper()
	if err := localenv.ImportUpstreamImages(context.Background(), node.Cluster); err != nil {
		t.Fatal(err)
	}
}

// configSidecarsReadOnlyTheirOwn: each config sidecar's identity reads and watches its component's ConfigMaps (the
// main one and a shard) and nothing else: not the other component's, not a Secret, and it writes nothing.
func configSidecarsReadOnlyTheirOwn(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for component, other := range map[string]string{"dns": "proxy", "proxy": "dns"} {
		path := filepath.Join(t.TempDir(), component+".kubeconfig")
		if err := node.Cluster.ServiceAccountKubeconfig(ctx, nodeChart, nodeChart+"-"+component+"-config", path); err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			t.Fatal(err)
		}
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cms := kube.CoreV1().ConfigMaps(nodeChart)
		own, err := cms.Get(ctx, nodeChart+"-"+component, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the %s sidecar cannot read its ConfigMap: %v", component, err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + own.Name})
		if err != nil {
			t.Fatalf("the %s sidecar cannot watch its ConfigMap: %v", component, err)
		}
		w.Stop()
		if _, err := cms.Get(ctx, routes.ShardName(own.Name, 0), metav1.GetOptions{}); err != nil {
			t.Fatalf("the %s sidecar cannot read its first shard: %v", component, err)
		}
		for what, err := range map[string]error{
			"read the " + other + " ConfigMap": func() error { _, err := cms.Get(ctx, nodeChart+"-"+other, metav1.GetOptions{}); return err }(),
			"read the " + other + " shard": func() error {
				_, err := cms.Get(ctx, routes.ShardName(nodeChart+"-"+other, 0), metav1.GetOptions{})
				return err
			}(),
			"list ConfigMaps": func() error { _, err := cms.List(ctx, metav1.ListOptions{}); return err }(),
			"read Secrets":    func() error { _, err := kube.CoreV1().Secrets(nodeChart).List(ctx, metav1.ListOptions{}); return err }(),
			"change its ConfigMap": func() error {
				own.Data = map[string]string{"Corefile": "evil"}
				_, err := cms.Update(ctx, own, metav1.UpdateOptions{})
				return err
			}(),
		} {
			if !apierrors.IsForbidden(err) {
				t.Errorf("the %s sidecar could %s: %v", component, what, err)
			}
		}
	}
}
