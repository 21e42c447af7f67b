package traffic

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/localproc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
)

const (
	// Namespace holds Traefik's ServiceAccount, the Gateway and the Gateway's certificate.
	Namespace      = "traefik"
	serviceAccount = "traefik"
	// Class names both the IngressClass and the GatewayClass Traefik serves.
	Class = "traefik"
	// Gateway is the Gateway in Namespace routes attach to; it accepts routes from every namespace.
	Gateway = "traefik"
	// ListenerHTTP and ListenerHTTPS are the Gateway's listeners (sectionName); ListenerHTTPS serves GatewayHostnames
	// with the certificate Controller.GatewayCA signs.
	ListenerHTTP  = "web"
	ListenerHTTPS = "websecure"
	// GatewayHostnames is the HTTPS listener's hostname: routes with a hostname under it are served over TLS.
	GatewayHostnames = "*.gateway.traffic.test"
	gatewaySecret    = "gateway-tls"

	// IngressController is Traefik's spec.controller in IngressClasses: it serves every class that names it.
	IngressController = "traefik.io/ingress-controller"
	// GatewayController is Traefik's controllerName in GatewayClasses and in routes' status.parents.
	GatewayController = "traefik.io/gateway-controller"
)

// Controller is a running Traefik.
type Controller struct {
	// HTTP and HTTPS are the addresses of its plain and TLS entry points, HTTPPort the first's port: a Gateway
	// listener on that port is served by the plain entry point.
	HTTP, HTTPS string
	HTTPPort    int64
	// GatewayRoots verifies the certificate of the Gateway's HTTPS listener.
	GatewayRoots *x509.CertPool
	// Gateway says whether the cluster serves Gateway API, and so whether the GatewayClass and Gateway exist and
	// Traefik serves routes.
	Gateway bool
	proc    *localproc.Process
}

// Start builds (or finds cached) Traefik, grants its ServiceAccount Traefik's ClusterRole, creates the IngressClass,
// GatewayClass and Gateway, starts it with its logs in dir/traefik.log and waits until it has accepted the
// GatewayClass and programmed the Gateway.
func Start(ctx context.Context, cluster *devcluster.Cluster, dir string, progress io.Writer) (*Controller, error) {
	bin, err := devcluster.BuildTraefik(ctx, progress)
	if err != nil {
		return nil, err
	}
	cfg := cluster.RESTConfig()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &Controller{}
	ports := [2]int{}
	for i := range ports {
		if ports[i], err = localproc.FreePortOn(devcluster.HostIP); err != nil {
			return nil, err
		}
	}
	c.HTTP, c.HTTPPort = net.JoinHostPort(devcluster.HostIP, strconv.Itoa(ports[0])), int64(ports[0])
	c.HTTPS = net.JoinHostPort(devcluster.HostIP, strconv.Itoa(ports[1]))

	if err := createRBAC(ctx, kube); err != nil {
		return nil, err
	}
	certPEM, keyPEM, roots, err := SelfSigned(GatewayHostnames)
	if err != nil {
		return nil, err
	}
	c.GatewayRoots = roots
	// Replaced, not kept: GatewayRoots trusts this run's certificate only.
	secrets := kube.CoreV1().Secrets(Namespace)
	if err := secrets.Delete(ctx, gatewaySecret, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if _, err := secrets.Create(ctx, TLSSecret(gatewaySecret, certPEM, keyPEM), metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	// Gateway API only where the cluster serves it (the demo's cluster does not install its CRDs).
	if _, err := kube.Discovery().ServerResourcesForGroupVersion(GatewayGVR.GroupVersion().String()); err == nil {
		c.Gateway = true
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	if err := createClasses(ctx, kube, dyn, c.Gateway, ports[0], ports[1]); err != nil {
		return nil, err
	}

	kubeconfig := filepath.Join(dir, "traefik.kubeconfig")
	if err := cluster.ServiceAccountKubeconfig(ctx, Namespace, serviceAccount, kubeconfig); err != nil {
		return nil, err
	}
	args := []string{
		"--global.checkNewVersion=false", "--global.sendAnonymousUsage=false", "--api.dashboard=false", "--log.level=INFO",
		"--entryPoints." + ListenerHTTP + ".address=" + c.HTTP, "--entryPoints." + ListenerHTTPS + ".address=" + c.HTTPS,
		// TLS on every router of the HTTPS entry point, as Traefik's own chart configures it: an Ingress's spec.tls
		// only loads its certificates, and a router without TLS answers no TLS request.
		"--entryPoints." + ListenerHTTPS + ".http.tls=true",
		"--providers.kubernetesIngress=true", "--providers.kubernetesIngress.ingressEndpoint.ip=" + devcluster.HostIP,
	}
	if c.Gateway {
		args = append(args, "--providers.kubernetesGateway=true", "--providers.kubernetesGateway.statusAddress.ip="+devcluster.HostIP)
	}
	c.proc, err = localproc.Start("traefik", filepath.Join(dir, "traefik.log"), []string{"KUBECONFIG=" + kubeconfig}, bin, args...)
	if err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx, dyn); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

// Stop ends Traefik; the cluster's objects stay (they go with the cluster).
func (c *Controller) Stop() error {
	if c == nil || c.proc == nil {
		return nil
	}
	return c.proc.Stop()
}

// Logs is the tail of Traefik's log.
func (c *Controller) Logs() string { return c.proc.Logs() }

// waitReady waits until Traefik has programmed the Gateway, or (without Gateway API) listens on its HTTP entry point.
func (c *Controller) waitReady(ctx context.Context, dyn dynamic.Interface) error {
	if !c.Gateway {
		return c.proc.WaitTCP(c.HTTP, time.Minute)
	}
	// Bounds the reads too.
	readCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var exited bool // traefik exited: the wait ends at once
	err := poll.Wait(ctx, time.Minute, "gateway "+Namespace+"/"+Gateway+" Programmed by traefik", func() (bool, string, error) {
		if exited = c.proc.Exited(); exited {
			return true, "", nil
		}
		gw, err := dyn.Resource(GatewayGVR).Namespace(Namespace).Get(readCtx, Gateway, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return conditionTrue(gw.Object, "Programmed"), "not Programmed", nil
	})
	if exited {
		return errors.New("traefik exited:\n" + c.proc.Logs())
	}
	if err != nil {
		return fmt.Errorf("%w:\n%s", err, c.proc.Logs())
	}
	return nil
}

func createRBAC(ctx context.Context, kube kubernetes.Interface) error {
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, err := kube.CoreV1().ServiceAccounts(Namespace).Create(ctx, serviceAccountObject(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, clusterRole(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, clusterRoleBinding(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
