//go:build e2e

package e2e_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// hostedServingCert is the certificate the hosted kube-apiserver presents to a direct connection.
func hostedServingCert(t *testing.T) *x509.Certificate {
	t.Helper()
	conn, err := tls.Dial("tcp", env.HostedAPIEndpoint(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only the certificate is read
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

// rotatedKubeconfig is a different kubeconfig for the same hosted cluster: a ServiceAccount token with cluster-admin,
// as a rotation of HyperShift's admin kubeconfig would give different credentials.
func rotatedKubeconfig(t *testing.T) []byte {
	t.Helper()
	ctx := context.Background()
	cfg, err := hostedCl.ServiceAccountConfig(ctx, "kube-system", "rotated-admin")
	if err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "rotated-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "kube-system", Name: "rotated-admin"}},
	}
	if _, err := hostedKube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hosted"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["rotated"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["rotated"] = &clientcmdapi.Context{Cluster: "hosted", AuthInfo: "rotated"}
	kc.CurrentContext = "rotated"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
