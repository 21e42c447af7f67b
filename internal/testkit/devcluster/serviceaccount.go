package devcluster

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// ServiceAccountConfig creates the ServiceAccount namespace/name if it does not exist and returns a client config
// that authenticates as it with a TokenRequest token: the subject tests give less privilege than the controllers,
// to prove that what it may write does not gain it more.
func (c *Cluster) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	_, err := c.kube.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating ServiceAccount %s/%s: %w", namespace, name, err)
	}
	token, err := c.serviceAccountToken(ctx, namespace, name, time.Hour)
	if err != nil {
		return nil, err
	}
	cfg := rest.AnonymousClientConfig(c.RESTConfig())
	cfg.BearerToken = token
	return cfg, nil
}

// ServiceAccountKubeconfig writes a kubeconfig at path that authenticates as the existing ServiceAccount
// namespace/name with a TokenRequest token, for a component run as a process as its Pod would run (Kyverno's
// controllers, an ingress controller): it gets only what its RBAC grants.
func (c *Cluster) ServiceAccountKubeconfig(ctx context.Context, namespace, name, path string) error {
	token, err := c.serviceAccountToken(ctx, namespace, name, tokenLifetime)
	if err != nil {
		return err
	}
	return writeKubeconfig(path, c.server, c.caPEM, "system:serviceaccount:"+namespace+":"+name, token)
}

// serviceAccountToken requests a token of namespace/name valid for lifetime (TokenRequest API).
func (c *Cluster) serviceAccountToken(ctx context.Context, namespace, name string, lifetime time.Duration) (string, error) {
	seconds := int64(lifetime / time.Second)
	tr, err := c.kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}
