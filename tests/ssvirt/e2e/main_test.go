//go:build e2e

// Package e2e_test runs ssvirt-api in-process against a real kube-apiserver, etcd and kube-controller-manager
// (internal/testkit/devcluster) and a real PostgreSQL (tests/ssvirt/pgserver), authenticated as the
// ServiceAccount of the installed chart, so that the chart's RBAC is proven enough. The template.openshift.io and
// kubevirt.io CRDs are structural stubs and neither OpenShift's template controller nor KubeVirt runs: the tests
// play the first by setting TemplateInstance conditions and objects, and the second with fixture.KubeVirt.
// go test -tags e2e ./tests/ssvirt/e2e/ (make e2e-ssvirt).
package e2e_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/app"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/kube"
	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/store"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/fixture"
	"github.com/virtual-ingress/virtual-ingress/tests/ssvirt/pgserver"
)

const (
	templateNS = "openshift"
	releaseNS  = "ssvirt"
	adminUser  = "admin"
	adminPass  = "admin-password-1"
)

var (
	cluster *devcluster.Cluster
	pg      *pgserver.Server
	kubeCS  kubernetes.Interface
	dyn     dynamic.Interface
	// saConfig authenticates as the chart's ServiceAccount: the identity every ssvirt-api in these tests runs as.
	saConfig *rest.Config
	// srv is the instance most tests talk to (PostgreSQL).
	srv *instance
	// kubevirt plays KubeVirt's VirtualMachine controller.
	kubevirt *fixture.KubeVirt
)

// powerTimeout bounds the tests' power actions: long enough for the played KubeVirt, short enough to wait out.
const powerTimeout = 12 * time.Second

// instantiateTimeout bounds instantiation requests: the leader removes a vApp still without a TemplateInstance
// twice that long after its row was written.
const instantiateTimeout = 5 * time.Second

type instance struct {
	*app.App
	url    string
	cancel context.CancelFunc
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	level := zapcore.Level(1)
	if os.Getenv("SSVIRT_TEST_DEBUG") != "" {
		level = -1
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(level)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	begin := time.Now()
	dir, err := os.MkdirTemp("", "ssvirt-devcluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if cluster, err = devcluster.Start(ctx, devcluster.Options{Dir: dir}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = cluster.Stop() }()
	if pg, err = pgserver.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = pg.Close() }()
	if err := setup(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		return 1
	}
	kubevirt = fixture.RunKubeVirt(ctx, dyn)
	if srv, err = startInstance(ctx, store.DriverPostgres, pg.DSN(), 2*time.Second, 500*time.Millisecond); err != nil {
		fmt.Fprintln(os.Stderr, "starting ssvirt-api:", err)
		return 1
	}
	defer srv.stop()
	fmt.Fprintf(os.Stderr, "cluster, PostgreSQL, chart and ssvirt-api up in %s\n", time.Since(begin).Round(100*time.Millisecond))
	return m.Run()
}

func setup(ctx context.Context) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	admin := cluster.RESTConfig()
	if kubeCS, err = kubernetes.NewForConfig(admin); err != nil {
		return err
	}
	if dyn, err = dynamic.NewForConfig(admin); err != nil {
		return err
	}
	if err := fixture.InstallCRDs(ctx, admin); err != nil {
		return err
	}
	if _, err := kubeCS.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: templateNS}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	// The chart's RBAC (ServiceAccount, ClusterRole, Role in the template namespace) as helm installs it.
	release, err := helmrelease.ForRepoChart(cluster.Kubeconfig(), root, "ssvirt")
	if err != nil {
		return err
	}
	if err := release.Install(ctx, nil); err != nil {
		return fmt.Errorf("helm install ssvirt: %w", err)
	}
	if saConfig, err = cluster.ServiceAccountConfig(ctx, releaseNS, "ssvirt"); err != nil {
		return err
	}
	for _, name := range []string{"fedora", "centos"} {
		if err := fixture.CreateTemplate(ctx, dyn, fixture.Template(templateNS, name, false)); err != nil {
			return err
		}
	}
	// Not a catalog item: no KubeVirt label and annotation.
	return fixture.CreateTemplate(ctx, dyn, fixture.Template(templateNS, "plain", true))
}

// startInstance runs an ssvirt-api as the chart's ServiceAccount on a free loopback port.
func startInstance(ctx context.Context, driver, dsn string, resync, health time.Duration) (*instance, error) {
	ctx, cancel := context.WithCancel(ctx)
	key := make([]byte, 48)
	_, _ = rand.Read(key)
	a, err := app.Start(ctx, app.Config{
		ListenAddress: "127.0.0.1:0", DatabaseDriver: driver, DatabaseDSN: dsn,
		JWTKey: key, SessionLifetime: time.Hour, BootstrapAdmin: adminUser, BootstrapPass: adminPass,
		Kube: kube.Options{TemplateNamespace: templateNS, ResyncPeriod: resync, HealthInterval: health,
			PowerTimeout: powerTimeout, InstantiateTimeout: instantiateTimeout},
		RESTConfig: rest.CopyConfig(saConfig),
		Manager: ctrl.Options{
			Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
			// Some tests run a second instance in this process; its controllers share the names.
			Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		},
		Log: ctrl.Log.WithName("ssvirt-api"),
	})
	if err != nil {
		cancel()
		return nil, err
	}
	inst := &instance{App: a, url: "http://" + a.Addr, cancel: cancel}
	// Ready once Kubernetes has been seen and then the template cache answers, within a minute.
	deadline := time.Now().Add(time.Minute)
	err = poll.Wait(ctx, time.Minute, "ssvirt-api seeing Kubernetes", func() (bool, string, error) {
		return a.Cluster.Available(), a.Cluster.Status(), nil
	})
	if err == nil {
		err = poll.Wait(ctx, time.Until(deadline), "the template cache filled", func() (bool, string, error) {
			ts, err := a.Cluster.Templates(ctx)
			return err == nil && len(ts) > 0, fmt.Sprintf("%d templates", len(ts)), err
		})
	}
	if err != nil {
		inst.stop()
		return nil, err
	}
	return inst, nil
}

func (i *instance) stop() {
	i.cancel()
	_ = i.Wait()
}

func sqlitePath(t *testing.T) string { return filepath.Join(t.TempDir(), "ssvirt.db") }
