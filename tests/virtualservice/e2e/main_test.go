//go:build e2e

// Package operator_test runs the virtualservice-operator against a real kube-apiserver, etcd and
// kube-controller-manager (internal/testkit/devcluster) with the Istio VirtualService CRD registered:
// go test -tags e2e ./tests/virtualservice/e2e/ (make e2e-virtualservice, part of make test).
package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/virtual-ingress/virtual-ingress/internal/platform/metricsserver"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kubeobj"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualservice/controller"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualservice/fixture"
)

const (
	prodNS      = "prod"
	operatorNS  = "vso-system"
	configName  = "virtualservice-operator-config"
	initialConf = `defaultNamespace: prod
developerNamespaces: [dev-a, dev-b]
`
)

var (
	cluster  *devcluster.Cluster
	repoRoot string
	kube     kubernetes.Interface
	dyn      dynamic.Interface
	// op is the operator every test but the chart's talks to.
	op *operator
	// metricsToken is a ServiceAccount token allowed to GET /metrics, as Prometheus's would be.
	metricsToken string
	// conflicts makes the next write of a named VirtualService collide with a concurrent writer.
	conflicts = &conflictInjector{armed: map[string]func(){}}
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(zapcore.Level(zapLevel()))))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "vso-devcluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	begin := time.Now()
	cluster, err = devcluster.Start(ctx, devcluster.Options{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
		}
	}()
	if err := setup(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "cluster, CRD and operator up in %s\n", time.Since(begin).Round(100*time.Millisecond))
	code := m.Run()
	op.stop()
	return code
}

func zapLevel() int8 {
	if os.Getenv("VSO_TEST_DEBUG") != "" {
		return -1
	}
	return 1 // errors only: a passing run stays readable
}

func setup(ctx context.Context) error {
	var err error
	if repoRoot, err = repo.Root(); err != nil {
		return err
	}
	cfg := cluster.RESTConfig()
	if kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	if err := fixture.InstallCRD(ctx, cfg, repoRoot); err != nil {
		return err
	}
	if err := kubeobj.CreateNamespaces(ctx, kube, prodNS, "dev-a", "dev-b", "dev-c", operatorNS); err != nil {
		return err
	}
	if metricsToken, err = metricsReaderToken(ctx); err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: configName}, Data: map[string]string{"config.yaml": initialConf}}
	if _, err := kube.CoreV1().ConfigMaps(operatorNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return err
	}
	opCfg := cluster.RESTConfig()
	opCfg.Wrap(conflicts.wrap)
	op, err = startOperator(opCfg, types.NamespacedName{Namespace: operatorNS, Name: configName}, "virtualservice-operator")
	if err != nil {
		return err
	}
	return op.waitReady(ctx)
}

// operator is an in-process manager wired like cmd/virtualservice-operator, with metrics and probes on free ports.
type operator struct {
	metricsURL, probeURL string
	cancel               context.CancelFunc
	done                 chan error
}

func startOperator(cfg *rest.Config, cm types.NamespacedName, leaseName string) (*operator, error) {
	p, err := localproc.FreePorts(2)
	if err != nil {
		return nil, err
	}
	ports := []string{fmt.Sprintf("127.0.0.1:%d", p[0]), fmt.Sprintf("127.0.0.1:%d", p[1])}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:                         controller.ManagerCacheOptions(cm),
		Metrics:                       metricsserver.Options(ports[0], true),
		HealthProbeBindAddress:        ports[1],
		LeaderElection:                true,
		LeaderElectionID:              leaseName,
		LeaderElectionNamespace:       cm.Namespace,
		LeaderElectionReleaseOnCancel: true,
		// Two operators run in this process (the chart test adds one); controller names are per process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	if _, err := controller.Setup(mgr, controller.Options{ConfigMap: cm}); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	o := &operator{metricsURL: "https://" + ports[0] + "/metrics", probeURL: "http://" + ports[1], cancel: cancel, done: make(chan error, 1)}
	go func() { o.done <- mgr.Start(ctx) }()
	return o, nil
}

func (o *operator) stop() {
	o.cancel()
	if err := <-o.done; err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
	}
}

func (o *operator) waitReady(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		select {
		case err := <-o.done:
			return false, fmt.Errorf("operator exited: %w", err)
		default:
		}
		code, _, err := httpGet(o.probeURL + "/readyz")
		return err == nil && code == http.StatusOK, nil
	})
}

// conflictInjector is a concurrent writer the test controls: armed for a VirtualService name, it lets the operator
// read the object, then, when the operator's write is on its way, updates the object first, so the write carries a
// stale resourceVersion and the API server answers 409 Conflict.
type conflictInjector struct {
	mu    sync.Mutex
	armed map[string]func()
}

func (c *conflictInjector) arm(name string, write func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed[name] = write
}

func (c *conflictInjector) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPatch && strings.Contains(req.URL.Path, "/virtualservices/") {
			name := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
			c.mu.Lock()
			write := c.armed[name]
			delete(c.armed, name)
			c.mu.Unlock()
			if write != nil {
				write()
			}
		}
		return rt.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// metricsReaderToken gives a ServiceAccount the right to GET /metrics (what the chart's metrics-reader ClusterRole
// grants) and returns its token.
func metricsReaderToken(ctx context.Context) (string, error) {
	_, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	_, err = kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: operatorNS, Name: "prometheus"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "test-metrics-reader"},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	cfg, err := cluster.ServiceAccountConfig(ctx, operatorNS, "prometheus")
	if err != nil {
		return "", err
	}
	return cfg.BearerToken, nil
}
