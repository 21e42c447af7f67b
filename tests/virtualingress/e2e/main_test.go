//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// env is the cluster every test in the package shares; starting one takes tens of seconds, so tests isolate
// themselves by namespace instead.
var env struct {
	cluster  *devcluster.Cluster
	kube     kubernetes.Interface
	dyn      dynamic.Interface
	repoRoot string
	helm     *helmrelease.Release
	// engine is the chart's policy.engine under test; every install and upgrade passes it.
	engine string
	// stopController stops the status controller started by the last install or upgrade.
	stopController func()
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// Every write of a kyverno.io/v1 ClusterPolicy draws Kyverno 1.19's deprecation warning (expected while the
	// clusterPolicy engine is tested); printed for each Helm action it would bury the test output.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	root, err := repo.Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env.repoRoot = root
	// Under the repository (git-ignored), so that a failed CI run leaves the component logs where they can be read.
	dir := filepath.Join(root, ".devcluster", "e2e")
	start := time.Now()
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: dir, WithKyverno: true, Timeout: 5 * time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting devcluster:", err)
		return 1
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping devcluster:", err)
		}
	}()
	fmt.Printf("devcluster with Kyverno ready in %s\n", time.Since(start).Round(time.Millisecond))
	env.cluster = cluster
	// Gateway API's standard channel, so that the chart renders its VirtualHTTPRoute policies and the API server
	// validates every generated HTTPRoute with HTTPRoute's own schema.
	if err := cluster.ApplyGatewayAPICRDs(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "installing Gateway API's CRDs:", err)
		return 1
	}
	env.kube = kubernetes.NewForConfigOrDie(cluster.RESTConfig())
	env.dyn = dynamic.NewForConfigOrDie(cluster.RESTConfig())

	defer stopStatusController()
	return m.Run()
}
