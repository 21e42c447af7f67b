package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
	"github.com/virtual-ingress/virtual-ingress/tests/virtualingress/traffic"
)

// tenantBackend is the echo Pod standing in for the tenant's workload: every mirrored Service selects it, as every
// Service the Kubevirt CCM mirrors selects the same VM.
const tenantBackend = "relay-family"

// dataPlane is Traefik serving the demo's IngressClass, with the coder host's certificate.
type dataPlane struct {
	controller *traffic.Controller
	host, ca   string
}

// startDataPlane runs Traefik for IngressClass class, the tenant's echo Pod, and the Secrets the VirtualIngress's tls
// section names (self-signed; host's certificate is written next to the cluster for curl --cacert).
func startDataPlane(ctx context.Context, cluster *devcluster.Cluster, kube kubernetes.Interface, dir, class, host string) (*dataPlane, error) {
	step("Starting Traefik (an ingress controller, as a process) for IngressClass " + class + ", and the tenant's workload as an echo Pod")
	controller, err := traffic.Start(ctx, cluster, dir, os.Stderr)
	if err != nil {
		return nil, err
	}
	if _, err := kube.NetworkingV1().IngressClasses().Create(ctx, traffic.IngressClass(class), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	if err := traffic.RunBackend(ctx, kube, ns, tenantBackend); err != nil {
		return nil, err
	}
	// The two Secrets the VirtualIngress's tls section names.
	certPEM, keyPEM, _, err := traffic.SelfSigned(host)
	if err != nil {
		return nil, err
	}
	wildcardPEM, wildcardKey, _, err := traffic.SelfSigned("*." + host)
	if err != nil {
		return nil, err
	}
	for name, pair := range map[string][2][]byte{"coder-tls": {certPEM, keyPEM}, "coder-wildcard-tls": {wildcardPEM, wildcardKey}} {
		if _, err := kube.CoreV1().Secrets(ns).Create(ctx, traffic.TLSSecret(name, pair[0], pair[1]), metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	ca := filepath.Join(dir, "coder-ca.pem")
	if err := os.WriteFile(ca, certPEM, 0o644); err != nil {
		return nil, err
	}
	return &dataPlane{controller: controller, host: host, ca: ca}, nil
}

// service is the mirrored Service called name: in front of the tenant's echo Pod.
func (d *dataPlane) service(name string, labels map[string]string) *corev1.Service {
	svc := traffic.TenantService(labels, tenantBackend)
	svc.Name = name
	svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	return svc
}

// curl runs curl through Traefik for the coder host until the tenant's workload answers, and prints the command
// and the answer.
func (d *dataPlane) curl(ctx context.Context) error {
	addr, port, err := net.SplitHostPort(d.controller.HTTPS)
	if err != nil {
		return err
	}
	args := []string{"-sS", "--max-time", "2", "--resolve", d.host + ":" + port + ":" + addr, "--cacert", d.ca,
		"https://" + d.host + ":" + port + "/"}
	var out []byte
	if err := poll.Wait(ctx, time.Minute, "curl "+strings.Join(args, " ")+" answered by "+tenantBackend, func() (bool, string, error) {
		out, err = exec.CommandContext(ctx, "curl", args...).CombinedOutput()
		return err == nil && strings.HasPrefix(string(out), tenantBackend+" "), strings.TrimSpace(string(out)), err
	}); err != nil {
		return err
	}
	fmt.Printf("  $ curl %s\n  %s", strings.Join(args, " "), out)
	return nil
}

func (d *dataPlane) stop() {
	if d != nil {
		_ = d.controller.Stop()
	}
}
