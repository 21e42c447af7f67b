package controller

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
)

const publishedKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: hosted
  cluster: {server: "https://api.prod.example.com:6443", certificate-authority-data: Zm9v}
contexts:
- name: admin
  context: {cluster: hosted, user: admin}
current-context: admin
users:
- name: admin
  user: {token: t}
`

// The client goes to the Service and still checks the certificate against the published name.
func TestThroughServiceKeepsTheServerName(t *testing.T) {
	out, err := throughService([]byte(publishedKubeconfig), "kube-apiserver.clusters-prod.svc.cluster.local:6443")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(out)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://kube-apiserver.clusters-prod.svc.cluster.local:6443" || cfg.ServerName != "api.prod.example.com" {
		t.Fatalf("host %s, server name %s", cfg.Host, cfg.ServerName)
	}
	if string(cfg.CAData) != "foo" || cfg.BearerToken != "t" {
		t.Fatal("the CA or the credentials were lost")
	}
}

// The Service is used only when its name resolves: a hosted cluster without one keeps its published endpoint.
func TestControlPlaneServiceOnlyWhenItResolves(t *testing.T) {
	hc := types.NamespacedName{Namespace: "clusters", Name: "prod"}
	asked := ""
	c := controlPlane{service: "kube-apiserver", port: 6443, clusterDomain: "cluster.local",
		lookupHost: func(_ context.Context, host string) ([]string, error) {
			asked = host
			return []string{"10.96.4.4"}, nil
		}}
	if got := c.backend(context.Background(), hc); got != "kube-apiserver.clusters-prod.svc.cluster.local:6443" ||
		asked != "kube-apiserver.clusters-prod.svc.cluster.local." {
		t.Fatalf("backend %q after asking %q", got, asked)
	}
	c.lookupHost = func(context.Context, string) ([]string, error) { return nil, errors.New("no such host") }
	if got := c.backend(context.Background(), hc); got != "" {
		t.Fatalf("a Service that does not resolve gave %q", got)
	}
	c.service = ""
	if got := c.backend(context.Background(), hc); got != "" {
		t.Fatalf("disabled, got %q", got)
	}
}
