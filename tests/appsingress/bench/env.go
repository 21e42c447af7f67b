package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/metallb"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

const (
	clustersNS  = "clusters"
	operatorNS  = "apps-ingress"
	routerNS    = "openshift-ingress"
	metallbNS   = "metallb-system"
	poolName    = "bench"
	poolCIDR    = "127.20.0.0/22"
	vlanCIDR    = "127.0.1.0/24"
	vlanClient  = "127.0.1.5"
	proxyIP     = "127.0.0.1"
	dnsMap      = "apps-ingress-dns"
	proxyMap    = "apps-ingress-proxy"
	baseDomain  = "example.com"
	hostedName  = "bench"
	kubeconfigS = "bench-admin-kubeconfig"
)

var (
	hostedClusterGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	poolGVR          = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "ipaddresspools"}
)

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

type env struct {
	dir          string
	mgmt, hosted *devcluster.Cluster
	mgmtKube     kubernetes.Interface
	mgmtDyn      dynamic.Interface
	hostedKube   kubernetes.Interface
	hostedDyn    dynamic.Interface
	stops        []func()
}

func (e *env) stop() {
	for i := len(e.stops) - 1; i >= 0; i-- {
		e.stops[i]()
	}
}

func startEnv(ctx context.Context, dir string) (*env, error) {
	e := &env{dir: dir}
	var wg sync.WaitGroup
	var errM, errH error
	wg.Add(2)
	go func() {
		defer wg.Done()
		e.mgmt, errM = devcluster.Start(ctx, devcluster.Options{Dir: filepath.Join(dir, "management")})
	}()
	go func() {
		defer wg.Done()
		e.hosted, errH = devcluster.Start(ctx, devcluster.Options{Dir: filepath.Join(dir, "hosted")})
	}()
	wg.Wait()
	for _, c := range []*devcluster.Cluster{e.mgmt, e.hosted} {
		if c != nil {
			e.stops = append(e.stops, func() { _ = c.Stop() })
		}
	}
	if errM != nil || errH != nil {
		return e, fmt.Errorf("starting the clusters: %v %v", errM, errH)
	}
	var err error
	if e.mgmtKube, err = kubernetes.NewForConfig(e.mgmt.RESTConfig()); err != nil {
		return e, err
	}
	if e.mgmtDyn, err = dynamic.NewForConfig(e.mgmt.RESTConfig()); err != nil {
		return e, err
	}
	if e.hostedKube, err = kubernetes.NewForConfig(e.hosted.RESTConfig()); err != nil {
		return e, err
	}
	if e.hostedDyn, err = dynamic.NewForConfig(e.hosted.RESTConfig()); err != nil {
		return e, err
	}
	return e, e.prepare(ctx)
}

func (e *env) prepare(ctx context.Context) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	crd, err := os.ReadFile(filepath.Join(root, "charts", "apps-ingress-operator", "crds", "hostedcluster.virtual-ingress.io_appsingresses.yaml"))
	if err != nil {
		return err
	}
	cs, err := apiextensionsclient.NewForConfig(e.mgmt.RESTConfig())
	if err != nil {
		return err
	}
	for _, data := range [][]byte{crd, []byte(hostedClusterCRD)} {
		if err := createCRD(ctx, cs, data); err != nil {
			return err
		}
	}
	for _, ns := range []string{clustersNS, operatorNS} {
		if err := createNamespace(ctx, e.mgmtKube, ns); err != nil {
			return err
		}
	}
	for _, ns := range []string{routerNS, metallbNS} {
		if err := createNamespace(ctx, e.hostedKube, ns); err != nil {
			return err
		}
	}
	if err := metallb.InstallCRDs(ctx, e.hosted.RESTConfig()); err != nil {
		return err
	}
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool",
		"metadata": map[string]any{"name": poolName, "namespace": metallbNS},
		"spec":     map[string]any{"addresses": []any{poolCIDR}, "autoAssign": false},
	}}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := e.hostedDyn.Resource(poolGVR).Namespace(metallbNS).Create(ctx, pool, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), nil
	}); err != nil {
		return fmt.Errorf("creating the IPAddressPool: %w", err)
	}
	mlb, err := metallb.Start(ctx, e.dir, e.hosted.Kubeconfig(), metallbNS)
	if err != nil {
		return err
	}
	e.stops = append(e.stops, func() { _ = mlb.Stop() })

	kubeconfig, err := os.ReadFile(e.hosted.Kubeconfig())
	if err != nil {
		return err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: clustersNS, Name: kubeconfigS}, Data: map[string][]byte{"kubeconfig": kubeconfig}}
	if _, err := e.mgmtKube.CoreV1().Secrets(clustersNS).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return err
	}
	hc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
		"metadata": map[string]any{"name": hostedName, "namespace": clustersNS}, "spec": map[string]any{},
	}}
	created, err := e.mgmtDyn.Resource(hostedClusterGVR).Namespace(clustersNS).Create(ctx, hc, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	host := strings.TrimPrefix(e.hosted.RESTConfig().Host, "https://")
	h, p, _ := strings.Cut(host, ":")
	port, _ := strconv.ParseInt(p, 10, 64)
	created.Object["status"] = map[string]any{
		"kubeconfig":           map[string]any{"name": kubeconfigS},
		"controlPlaneEndpoint": map[string]any{"host": h, "port": port},
	}
	_, err = e.mgmtDyn.Resource(hostedClusterGVR).Namespace(clustersNS).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

func createCRD(ctx context.Context, cs apiextensionsclient.Interface, data []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		return err
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

func createNamespace(ctx context.Context, kube kubernetes.Interface, name string) error {
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
