// Command bench measures the virtual-ingress policies on a real control plane with Kyverno (internal/testkit/devcluster):
// how long a VirtualIngress takes to get its Ingress, how long an Ingress takes to follow a recreated Service, and
// how 1,000 VirtualIngresses over 1,000 Services converge. It measures each policy engine of the chart
// (policy.engine) in turn on the same cluster: install, measure, uninstall, delete the engine's namespaces and
// restart Kyverno's controllers (fresh memory peaks and caches), then the next engine. It prints one table with a
// column per engine and writes the figures as JSON ({"machine", "engineOrder", "engines": {<engine>: ...}}).
//
//	go run ./tests/virtualingress/bench [--engines clusterPolicy,generatingPolicy] [--creates 200] [--recreates 100] [--gitops 100]
//	    [--gitops-cases 20] [--scale 1000] [--burst 1000] [--restart 1000] [--out _output/bench/virtualingress.json] [--dir .devcluster/bench]
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	benchkit "github.com/virtual-ingress/virtual-ingress/internal/testkit/bench"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

// releaseNamespace is the chart's release namespace (helmrelease.ForRepoChart).
const releaseNamespace = "virtual-ingress"

type options struct {
	creates, recreates, gitops, scale, burst int
	restartRecreates                         int
	// gitopsCases is how many Services are created with generateName, and how many relabelled, one at a time, each
	// for a VirtualIngress waiting for it.
	gitopsCases int
	// restart is the number of VirtualIngresses (over twice as many Services) present while Kyverno's background
	// controller restarts and the chart is upgraded.
	restart               int
	engines, out, dir     string
	timeout, burstTimeout time.Duration
	// routes installs Gateway API's CRDs, so that the chart renders its VirtualHTTPRoute policies, and measures them.
	routes bool
	// sizedFloor also measures the floor with triggers of a VirtualIngress's size.
	sizedFloor bool
}

// bench holds the clients every measurement uses, and the state of the engine being measured.
type bench struct {
	cluster *devcluster.Cluster
	kube    kubernetes.Interface
	dyn     dynamic.Interface
	meta    metadata.Interface
	timeout time.Duration
	// burstTimeout bounds the wait for a burst of Service recreations to be followed: the status controller's
	// repairs of what Kyverno dropped come over minutes.
	burstTimeout time.Duration
	// restartRecreates is how many Services the restart run recreates after each event.
	restartRecreates int
	// floorRestart: the floor is also measured after a restart of the background controller (see restartFloor).
	floorRestart bool

	// engine is the policy engine under measurement; namespaces are the ones its measurements created.
	engine     string
	namespaces []string
	// skippedBefore is the count of UpdateRequests skipped by threshold when the engine's run started.
	skippedBefore int
	// failedBefore is the count of UpdateRequests Kyverno failed to create when the engine's run started.
	failedBefore int
	kyverno      *supervisor
}

func main() {
	var o options
	flag.IntVar(&o.creates, "creates", 200, "VirtualIngresses created one after the other for the create latency")
	flag.IntVar(&o.recreates, "recreates", 100, "Service recreations for the recreate latency")
	flag.IntVar(&o.gitops, "gitops", 100, "Service and VirtualIngress pairs applied at once for the GitOps latency, measured on the floor's bare rule too (the GitOps floor); 0 skips both")
	flag.IntVar(&o.gitopsCases, "gitops-cases", 20, "Services created with generateName, and existing Services relabelled to match, one at a time, each for a VirtualIngress waiting unresolved, to Ready; 0 skips both")
	flag.IntVar(&o.scale, "scale", 1000, "VirtualIngresses (and Services) in one namespace for the scale run; 0 skips it")
	flag.IntVar(&o.restart, "restart", 1000, "VirtualIngresses (over twice as many Services) present during a background controller restart and a helm upgrade; 0 skips it")
	flag.IntVar(&o.restartRecreates, "restart-recreates", 50, "Services recreated at once with no event before, right after the background controller restart, and after the helm upgrade (at most a third of --restart)")
	flag.IntVar(&o.burst, "burst", 1000, "Services recreated at once in the scale run's second phase (at most --scale)")
	flag.StringVar(&o.engines, "engines", strings.Join(policyengine.All, ","), "policy engines (chart value policy.engine) to measure, one after the other on the same cluster")
	flag.StringVar(&o.out, "out", "_output/bench/virtualingress.json", "where to write the results as JSON")
	flag.StringVar(&o.dir, "dir", "", "devcluster directory (default .devcluster/bench in the repository)")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long one measurement may wait for convergence")
	flag.DurationVar(&o.burstTimeout, "burst-timeout", 30*time.Minute, "how long the burst of Service recreations may take to be followed")
	flag.BoolVar(&o.routes, "routes", true, "install Gateway API's CRDs and measure VirtualHTTPRoutes too")
	flag.BoolVar(&o.sizedFloor, "sized-floor", true, "also measure the floor with triggers that carry a VirtualIngress's spec and status (what Kyverno's trigger lists cost at that size)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	engines, err := parseEngines(o.engines)
	if err != nil {
		return err
	}
	o.burst = min(o.burst, o.scale)
	// Kyverno answers every ClusterPolicy write with two expected warnings (kyverno.io/v1 is deprecated; status is
	// patched without a status subresource, which this CRD does not have); see the README.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	ctx := context.Background()
	root, err := repo.Root()
	if err != nil {
		return err
	}
	if o.dir == "" {
		o.dir = filepath.Join(root, ".devcluster", "bench")
	}
	cluster, err := devcluster.Start(ctx, devcluster.Options{Dir: o.dir, WithKyverno: true, KyvernoArgs: kyvernoArgs, Timeout: 5 * time.Minute})
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }()
	if o.routes {
		if err := cluster.ApplyGatewayAPICRDs(ctx); err != nil {
			return err
		}
	}

	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(filepath.Dir(o.out), "virtualingress-status-controller.log"))
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile), zap.UseDevMode(true)))

	cfg := cluster.RESTConfig()
	// The scale run creates thousands of objects; client-side throttling would measure the client, not Kyverno.
	cfg.QPS, cfg.Burst = 500, 1000
	superviseCtx, stopSupervising := context.WithCancel(ctx)
	defer stopSupervising()
	b := &bench{cluster: cluster, kube: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg), meta: metadata.NewForConfigOrDie(cfg),
		timeout: o.timeout, burstTimeout: o.burstTimeout, restartRecreates: o.restartRecreates, floorRestart: o.restart > 0,
		kyverno: newSupervisor(superviseCtx, cluster)}
	release, err := helmrelease.ForRepoChart(cluster.Kubeconfig(), root, "virtual-ingress")
	if err != nil {
		return err
	}

	versions, err := repo.ReadVersions(root)
	if err != nil {
		return err
	}
	res := results{Machine: machine(versions), Order: engines, Engines: map[string]*engineResults{}}
	// The floor is the scale run's and the restart run's: of the scale run's size, else of the restart run's.
	if floorSize := cmp.Or(o.scale, o.restart); floorSize > 0 {
		if res.Floor, err = b.floor(ctx, floorSize, false); err != nil {
			return err
		}
		if o.sizedFloor && o.scale > 0 {
			if res.SizedFloor, err = b.floor(ctx, o.scale, true); err != nil {
				return err
			}
		}
	}
	// The GitOps floor is measured before the engines, on a cluster without their policies, like the floors above.
	if o.gitops > 0 {
		if res.GitOpsFloor, err = b.gitopsFloor(ctx, o.gitops); err != nil {
			return err
		}
	}
	for i, engine := range engines {
		r, err := b.runEngine(ctx, release, engine, o)
		res.Engines[engine] = r
		if r.Scale != nil && r.Scale.Error == "" {
			r.Scale.FloorRatio, r.Scale.FloorRatioUpperBound = res.Floor.ratio(r.Scale.ConvergeSeconds)
			r.Scale.SizedFloorRatio, r.Scale.SizedFloorRatioUpperBound = res.SizedFloor.ratio(r.Scale.ConvergeSeconds)
		}
		r.GitOpsFloorRatio = res.GitOpsFloor.p95Ratio(r.GitOps)
		r.GitOpsIngressFloorRatio = res.GitOpsFloor.p95Ratio(r.GitOpsIngress)
		if err != nil {
			// Without a clean cluster the next engine's figures would mean nothing.
			r.Error = err.Error()
			for _, skipped := range engines[i+1:] {
				res.Engines[skipped] = &engineResults{Error: "not run: " + engine + " failed"}
			}
			break
		}
		// The last engine's objects go with the cluster.
		if i < len(engines)-1 {
			fmt.Printf("[%s] helm uninstall, deleting its namespaces, restarting Kyverno\n", engine)
			cleanStart := time.Now()
			if err := release.Uninstall(); err != nil {
				r.Error = "helm uninstall: " + err.Error()
			} else if err := b.cleanUp(ctx); err != nil {
				r.Error = "cleaning up: " + err.Error()
			}
			if r.Error != "" {
				for _, skipped := range engines[i+1:] {
					res.Engines[skipped] = &engineResults{Error: "not run: cleaning up after " + engine + " failed"}
				}
				break
			}
			fmt.Printf("[%s] cleaned up in %.0f s\n", engine, time.Since(cleanStart).Seconds())
		}
	}
	res.print(os.Stdout, o.burst)
	if err := benchkit.WriteJSON(o.out, res); err != nil {
		return err
	}
	fmt.Println("results written to", o.out)
	var failed []string
	for _, f := range []*floorResult{res.Floor, res.SizedFloor} {
		if f != nil && f.Error != "" {
			failed = append(failed, f.name()+" ("+f.Error+")")
		}
		if f != nil && f.RestartError != "" {
			failed = append(failed, f.name()+" after a restart ("+f.RestartError+")")
		}
	}
	if f := res.GitOpsFloor; f != nil && f.ApplyToIngress.Error != "" {
		failed = append(failed, "GitOps floor ("+f.ApplyToIngress.Error+")")
	}
	for _, engine := range engines {
		if len(res.Engines[engine].errors()) > 0 {
			failed = append(failed, engine)
		}
	}
	if len(failed) > 0 {
		// The cluster's directory goes with it; keep what Kyverno said.
		logs := filepath.Join(filepath.Dir(o.out), "kyverno-logs")
		if err := saveKyvernoLogs(cluster, logs); err != nil {
			fmt.Fprintln(os.Stderr, "bench: saving Kyverno's logs:", err)
		} else {
			fmt.Println("Kyverno's logs (every engine, one file per controller) saved in", logs)
		}
		return fmt.Errorf("failed measurements for %s (see above)", strings.Join(failed, ", "))
	}
	return nil
}

// runEngine installs the chart with policy.engine=engine and runs every measurement. A failed measurement is
// recorded in its result and the next one runs (each has its own namespace); an error is returned only when the
// chart could not be installed.
func (b *bench) runEngine(ctx context.Context, release *helmrelease.Release, engine string, o options) (*engineResults, error) {
	start := time.Now()
	r := &engineResults{}
	defer func() { r.WallSeconds = time.Since(start).Seconds() }()
	b.engine, b.namespaces = engine, nil
	b.skippedBefore, b.failedBefore = b.skippedByThreshold(), b.failedToCreate()

	fmt.Printf("[%s] helm install with policy.engine=%s\n", engine, engine)
	values := map[string]any{"policy": map[string]any{"engine": engine}}
	if err := release.Install(ctx, values); err != nil {
		return r, fmt.Errorf("helm install: %w", err)
	}
	readyCtx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	if err := b.cluster.WaitPoliciesReady(readyCtx, policyengine.PolicySelector); err != nil {
		return r, err
	}
	if err := virtualingress.WaitAdmissionReady(readyCtx, b.dyn, setupTimeout); err != nil {
		return r, err
	}
	r.PoliciesReadySeconds = time.Since(start).Seconds()
	stopController, err := b.startStatusController(ctx)
	if err != nil {
		return r, err
	}
	defer func() {
		if err := stopController(); err != nil {
			fmt.Printf("[%s] status controller: %v\n", engine, err)
		}
	}()

	r.Create = latencyRow(engine, fmt.Sprintf("create latency: %d VirtualIngresses, one at a time", o.creates),
		createTarget, func() ([]time.Duration, error) { return b.createLatency(ctx, o.creates, b.virtualIngresses()) })
	r.Recreate = latencyRow(engine, fmt.Sprintf("recreate latency: %d Service recreations", o.recreates),
		recreateTarget, func() ([]time.Duration, error) { return b.recreateLatency(ctx, o.recreates, b.virtualIngresses()) })
	if o.gitops > 0 {
		var split gitopsSplit
		r.GitOps = latencyRow(engine, fmt.Sprintf("GitOps apply: %d Services and their VirtualIngresses at once, to Ready", o.gitops),
			gitopsTarget, func() ([]time.Duration, error) {
				var err error
				split, err = b.gitopsLatency(ctx, o.gitops)
				return split.Ready, err
			})
		r.GitOpsLate, r.GitOpsUnresolvedLate, r.GitOpsIngressLate = split.Late, split.ResolvedLate, split.IngressLate
		if r.GitOps.Error == "" {
			r.GitOpsResolved, r.GitOpsIngress = summarise(split.Resolved, gitopsTarget), summarise(split.Ingress, gitopsTarget)
		}
	}
	if o.gitopsCases > 0 {
		r.GenerateName = b.matchRow(ctx, o.gitopsCases, b.generateNameCase())
		r.Relabel = b.matchRow(ctx, o.gitopsCases, b.relabelCase())
	}
	if o.routes {
		r.RouteCreate = latencyRow(engine, fmt.Sprintf("route create latency: %d VirtualHTTPRoutes, one at a time", o.creates),
			createTarget, func() ([]time.Duration, error) { return b.createLatency(ctx, o.creates, b.virtualHTTPRoutes()) })
		r.RouteRecreate = latencyRow(engine, fmt.Sprintf("route recreate latency: %d Service recreations", o.recreates),
			recreateTarget, func() ([]time.Duration, error) { return b.recreateLatency(ctx, o.recreates, b.virtualHTTPRoutes()) })
	}
	if o.scale > 0 {
		fmt.Printf("[%s] scale: %d VirtualIngresses over %d Services in one namespace, then a burst of %d recreations\n", engine, o.scale, o.scale, o.burst)
		if r.Scale, err = b.scaleRun(ctx, o.scale, o.burst); err != nil {
			r.Scale = &scale{VirtualIngresses: o.scale, Error: err.Error()}
			fmt.Printf("[%s] scale run failed: %v\n", engine, err)
		}
	}
	if o.restart > 0 {
		fmt.Printf("[%s] restart: %d VirtualIngresses over %d Services, a background controller restart, then a helm upgrade\n", engine, o.restart, 2*o.restart)
		if r.Restarts, err = b.restartRun(ctx, release, values, o.restart); err != nil {
			if r.Restarts == nil {
				r.Restarts = &restarts{VirtualIngresses: o.restart}
			}
			r.Restarts.Error = err.Error()
			fmt.Printf("[%s] restart run failed: %v\n", engine, err)
		}
	}
	return r, nil
}

// startStatusController runs the chart's status controller in this process, as the installed Deployment's
// ServiceAccount and with its flags, so that the figures include what it costs and what it repairs.
func (b *bench) startStatusController(ctx context.Context) (func() error, error) {
	return virtualingress.StartInstalledStatusController(ctx, b.cluster, b.dyn, releaseNamespace, "kyverno", nil)
}

// saveKyvernoLogs copies the logs of Kyverno's controllers (every run of each, appended) into dir.
func saveKyvernoLogs(cluster *devcluster.Cluster, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range []string{devcluster.ComponentKyverno, devcluster.ComponentKyvernoBackground} {
		data, err := os.ReadFile(cluster.LogPath(c))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, c+".log"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
