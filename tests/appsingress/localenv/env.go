// Package localenv starts what the apps-ingress-operator's benchmark and demo run on: a management and a hosted
// devcluster, MetalLB's controller with a loopback pool, a HostedCluster with its kubeconfig Secret, CoreDNS, HAProxy,
// a stand-in router, and the operator as its real binary.
package localenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kubeobj"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/metallb"
)

// Names and addresses. Loopback only: Linux answers for all of 127.0.0.0/8, so a client picks its DNS view by its
// source address (VLANClient is in VLANCIDR, ProxyIP stands for the pod network).
const (
	ClustersNS = "clusters"
	OperatorNS = "apps-ingress"
	RouterNS   = "openshift-ingress"
	MetalLBNS  = "metallb-system"
	PoolName   = "apps"
	poolCIDR   = "127.20.0.0/21"
	// PoolB is a second pool: moving an AppsIngress to it makes MetalLB change the Service's IP.
	PoolB       = "apps-b"
	poolBCIDR   = "127.21.0.0/24"
	VLANCIDR    = "127.0.1.0/24"
	VLANClient  = "127.0.1.5"
	ProxyIP     = "127.0.0.1"
	DNSMap      = "apps-ingress-dns"
	ProxyMap    = "apps-ingress-proxy"
	BaseDomain  = "example.com"
	HostedName  = "hosted"
	kubeconfigS = "hosted-admin-kubeconfig"
)

var (
	// HostedClusterGVR is the resource of the stub of HyperShift's HostedCluster.
	HostedClusterGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	poolGVR          = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "ipaddresspools"}
)

// hostedClusterCRD is a stub of HyperShift's HostedCluster: the operator reads status.kubeconfig.name and
// status.controlPlaneEndpoint only, so the schema keeps every field.
const hostedClusterCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: hostedclusters.hypershift.openshift.io}
spec:
  group: hypershift.openshift.io
  scope: Namespaced
  names: {kind: HostedCluster, listKind: HostedClusterList, plural: hostedclusters, singular: hostedcluster}
  versions:
  - name: v1beta1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// Env is the running environment.
type Env struct {
	dir string
	// chartCRD: the chart installed on the node brings the AppsIngress CRD (a template of its release, which would not
	// take over one created before it).
	chartCRD     bool
	Mgmt, Hosted *devcluster.Cluster
	MgmtKube     kubernetes.Interface
	MgmtDyn      dynamic.Interface
	HostedKube   kubernetes.Interface
	HostedDyn    dynamic.Interface
	stops        []func()
}

// OnStop adds f to what Stop runs (last added, first run).
func (e *Env) OnStop(f func()) { e.stops = append(e.stops, f) }

// Stop stops everything Start started.
func (e *Env) Stop() {
	for i := len(e.stops) - 1; i >= 0; i-- {
		e.stops[i]()
	}
}

// Start brings up both clusters, MetalLB, the HostedCluster and its Secret, in dir.
func Start(ctx context.Context, dir string) (*Env, error) {
	return StartWith(ctx, dir, Options{})
}

// Options changes what Start runs.
type Options struct {
	// Node gives the management cluster a node (devcluster.Options.WithNode), so that the chart's Deployments run;
	// the hosted cluster's API server then serves on the node's address, which the operator's Pod can reach. The
	// node runs Multus, for the chart's secondary-network attachment mode.
	Node bool
}

// StartWith is Start with options.
func StartWith(ctx context.Context, dir string, o Options) (*Env, error) {
	e, err := StartClusters(ctx, dir, o)
	if err != nil {
		return e, err
	}
	return e, e.prepare(ctx)
}

// StartClusters starts the management and the hosted cluster, in dir, and their clients; nothing runs in them yet.
func StartClusters(ctx context.Context, dir string, o Options) (*Env, error) {
	e := &Env{dir: dir, chartCRD: o.Node}
	var errM, errH error
	mgmt := devcluster.Options{Dir: filepath.Join(dir, "management"), WithNode: o.Node, WithMultus: o.Node}
	hosted := devcluster.Options{Dir: filepath.Join(dir, "hosted")}
	if o.Node {
		// The host's end of the node's link exists once the management cluster has started.
		hosted.APIServerAddress = devcluster.HostIP
		if e.Mgmt, errM = devcluster.Start(ctx, mgmt); errM == nil {
			e.Hosted, errH = devcluster.Start(ctx, hosted)
		}
	} else {
		var wg sync.WaitGroup
		wg.Go(func() { e.Mgmt, errM = devcluster.Start(ctx, mgmt) })
		wg.Go(func() { e.Hosted, errH = devcluster.Start(ctx, hosted) })
		wg.Wait()
	}
	for _, c := range []*devcluster.Cluster{e.Mgmt, e.Hosted} {
		if c != nil {
			e.stops = append(e.stops, func() { _ = c.Stop() })
		}
	}
	if errM != nil || errH != nil {
		return e, fmt.Errorf("starting the clusters: %w", errors.Join(errM, errH))
	}
	var err error
	if e.MgmtKube, err = kubernetes.NewForConfig(e.Mgmt.RESTConfig()); err != nil {
		return e, err
	}
	if e.MgmtDyn, err = dynamic.NewForConfig(e.Mgmt.RESTConfig()); err != nil {
		return e, err
	}
	if e.HostedKube, err = kubernetes.NewForConfig(e.Hosted.RESTConfig()); err != nil {
		return e, err
	}
	if e.HostedDyn, err = dynamic.NewForConfig(e.Hosted.RESTConfig()); err != nil {
		return e, err
	}
	return e, nil
}

func (e *Env) prepare(ctx context.Context) error {
	crds := e.CreateCRDs
	if e.chartCRD {
		crds = func(ctx context.Context) error {
			return kubeobj.CreateCRDs(ctx, e.Mgmt.RESTConfig(), []byte(hostedClusterCRD))
		}
	}
	if err := crds(ctx); err != nil {
		return err
	}
	if err := kubeobj.CreateNamespaces(ctx, e.MgmtKube, ClustersNS, OperatorNS); err != nil {
		return err
	}
	if err := kubeobj.CreateNamespaces(ctx, e.HostedKube, RouterNS); err != nil {
		return err
	}
	if err := e.CreatePools(ctx, map[string]string{PoolName: poolCIDR, PoolB: poolBCIDR}); err != nil {
		return err
	}
	mlb, err := e.StartMetalLB(ctx)
	if err != nil {
		return err
	}
	e.stops = append(e.stops, func() { _ = mlb.Stop() })

	kubeconfig, err := os.ReadFile(e.Hosted.Kubeconfig())
	if err != nil {
		return err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ClustersNS, Name: kubeconfigS}, Data: map[string][]byte{"kubeconfig": kubeconfig}}
	if _, err := e.MgmtKube.CoreV1().Secrets(ClustersNS).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return err
	}
	return e.CreateHostedCluster(ctx, HostedName, kubeconfigS, e.HostedAPIEndpoint())
}

// CreateCRDs creates the chart's AppsIngress CRD and the HostedCluster stub in the management cluster, and waits
// until both are served.
func (e *Env) CreateCRDs(ctx context.Context) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	crd, err := os.ReadFile(filepath.Join(root, "charts", "apps-ingress-operator", "files", "crds", "hostedcluster.virtual-ingress.io_appsingresses.yaml"))
	if err != nil {
		return err
	}
	return kubeobj.CreateCRDs(ctx, e.Mgmt.RESTConfig(), crd, []byte(hostedClusterCRD))
}

// CreatePools installs MetalLB's CRDs in the hosted cluster and creates an IPAddressPool for each name (addresses:
// a CIDR or a range). Only Services that name a pool get an address from it.
func (e *Env) CreatePools(ctx context.Context, pools map[string]string) error {
	if err := kubeobj.CreateNamespaces(ctx, e.HostedKube, MetalLBNS); err != nil {
		return err
	}
	if err := metallb.InstallCRDs(ctx, e.Hosted.RESTConfig()); err != nil {
		return err
	}
	for name, addresses := range pools {
		if err := e.createPool(ctx, name, addresses); err != nil {
			return err
		}
	}
	return nil
}

// createPool retries while MetalLB's CRDs are new to the API server.
func (e *Env) createPool(ctx context.Context, name, addresses string) error {
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool",
		"metadata": map[string]any{"name": name, "namespace": MetalLBNS},
		"spec":     map[string]any{"addresses": []any{addresses}, "autoAssign": false},
	}}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := e.HostedDyn.Resource(poolGVR).Namespace(MetalLBNS).Create(ctx, pool, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), nil
	}); err != nil {
		return fmt.Errorf("creating the IPAddressPool %s: %w", name, err)
	}
	return nil
}

// StartMetalLB starts MetalLB's controller on the hosted cluster; the caller stops it.
func (e *Env) StartMetalLB(ctx context.Context) (*localproc.Process, error) {
	return metallb.Start(ctx, e.dir, e.Hosted.Kubeconfig(), MetalLBNS)
}

// HostedAPIEndpoint is host:port of the hosted cluster's kube-apiserver.
func (e *Env) HostedAPIEndpoint() string {
	return strings.TrimPrefix(e.Hosted.RESTConfig().Host, "https://")
}

// CreateHostedCluster creates the HostedCluster name in ClustersNS, its status naming the kubeconfig Secret and the
// API endpoint (host:port), as HyperShift publishes them.
func (e *Env) CreateHostedCluster(ctx context.Context, name, kubeconfigSecret, apiEndpoint string) error {
	hc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
		"metadata": map[string]any{"name": name, "namespace": ClustersNS}, "spec": map[string]any{},
	}}
	created, err := e.MgmtDyn.Resource(HostedClusterGVR).Namespace(ClustersNS).Create(ctx, hc, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	host, p, _ := net.SplitHostPort(apiEndpoint)
	port, _ := strconv.ParseInt(p, 10, 64)
	created.Object["status"] = map[string]any{
		"kubeconfig":           map[string]any{"name": kubeconfigSecret},
		"controlPlaneEndpoint": map[string]any{"host": host, "port": port},
	}
	_, err = e.MgmtDyn.Resource(HostedClusterGVR).Namespace(ClustersNS).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}
