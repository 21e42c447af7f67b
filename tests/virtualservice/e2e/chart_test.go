//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/kubeobj"
)

const (
	helmNS      = "vso-helm"
	helmProd    = "helm-prod"
	helmDev     = "helm-dev"
	helmRelease = "vso"
	helmName    = "vso-virtualservice-operator" // <release>-<chart>
)

// TestHelmInstall installs the chart with Helm's SDK, checks what it created, checks its RBAC with
// SubjectAccessReviews, and then runs the operator under the chart's ServiceAccount (impersonated; there is no
// kubelet to run the Deployment) to show those permissions are enough for it to do its job.
func TestHelmInstall(t *testing.T) {
	ctx := t.Context()
	// The Roles go into the production and developer namespaces, which the chart does not own.
	if err := kubeobj.CreateNamespaces(ctx, kube, helmProd, helmDev); err != nil {
		t.Fatal(err)
	}
	release, err := helmrelease.New(cluster.Kubeconfig(), filepath.Join(repoRoot, "charts", "virtualservice-operator"), helmRelease, helmNS)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{"config": map[string]any{"defaultNamespace": helmProd, "developerNamespaces": []any{helmDev}}}
	if err := release.Install(ctx, values); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	t.Cleanup(func() {
		if err := release.Uninstall(); err != nil {
			t.Errorf("helm uninstall: %v", err)
		}
	})

	dep, err := kube.AppsV1().Deployments(helmNS).Get(ctx, helmName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkDeployment(t, dep)
	mustExist(t, "ServiceAccount", func() error {
		_, err := kube.CoreV1().ServiceAccounts(helmNS).Get(ctx, helmName, metav1.GetOptions{})
		return err
	})
	mustExist(t, "ConfigMap", func() error {
		_, err := kube.CoreV1().ConfigMaps(helmNS).Get(ctx, helmName+"-config", metav1.GetOptions{})
		return err
	})
	mustExist(t, "metrics Service", func() error {
		_, err := kube.CoreV1().Services(helmNS).Get(ctx, helmName+"-metrics", metav1.GetOptions{})
		return err
	})
	for ns, name := range map[string]string{helmNS: helmName + "-config", helmProd: helmName + "-production", helmDev: helmName + "-developer"} {
		mustExist(t, "Role "+ns+"/"+name, func() error {
			_, err := kube.RbacV1().Roles(ns).Get(ctx, name, metav1.GetOptions{})
			return err
		})
		mustExist(t, "RoleBinding "+ns+"/"+name, func() error {
			_, err := kube.RbacV1().RoleBindings(ns).Get(ctx, name, metav1.GetOptions{})
			return err
		})
	}
	// The one cluster-wide binding lets the operator review metrics callers (checkRBAC shows it grants no more).
	crbs, err := kube.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + helmRelease})
	if err != nil {
		t.Fatal(err)
	}
	for _, crb := range crbs.Items {
		if crb.RoleRef.Name != helmName+"-metrics-auth" {
			t.Errorf("cluster-wide binding %s to %s", crb.Name, crb.RoleRef.Name)
		}
	}

	checkRBAC(t)
	runAsServiceAccount(t)
}

func mustExist(t *testing.T, what string, get func() error) {
	t.Helper()
	if err := get(); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

func checkDeployment(t *testing.T, dep *appsv1.Deployment) {
	t.Helper()
	pod := dep.Spec.Template.Spec
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("container securityContext %+v", sc)
	}
	psc := pod.SecurityContext
	if psc == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v", psc)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes %+v %+v", c.ReadinessProbe, c.LivenessProbe)
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v", c.Resources)
	}
	if pod.ServiceAccountName != helmName {
		t.Errorf("serviceAccountName %q", pod.ServiceAccountName)
	}
}

func checkRBAC(t *testing.T) {
	sa := "system:serviceaccount:" + helmNS + ":" + helmName
	cases := []struct {
		attrs authorizationv1.ResourceAttributes
		allow bool
	}{
		{authorizationv1.ResourceAttributes{Namespace: helmDev, Verb: "watch", Resource: "services"}, true},
		{authorizationv1.ResourceAttributes{Namespace: helmDev, Verb: "list", Group: "discovery.k8s.io", Resource: "endpointslices"}, true},
		{authorizationv1.ResourceAttributes{Namespace: helmProd, Verb: "list", Resource: "services"}, true},
		{authorizationv1.ResourceAttributes{Namespace: helmProd, Verb: "patch", Group: "networking.istio.io", Resource: "virtualservices"}, true},
		{authorizationv1.ResourceAttributes{Namespace: helmProd, Verb: "delete", Group: "networking.istio.io", Resource: "virtualservices"}, true},
		{authorizationv1.ResourceAttributes{Namespace: helmProd, Verb: "create", Group: "events.k8s.io", Resource: "events"}, true},
		{authorizationv1.ResourceAttributes{Namespace: helmNS, Verb: "watch", Resource: "configmaps", Name: helmName + "-config"}, true},
		{authorizationv1.ResourceAttributes{Namespace: helmNS, Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Name: helmName}, true},
		// Secure metrics: asking the API server who a caller is and what it may do.
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, true},
		// Not more than that.
		{authorizationv1.ResourceAttributes{Namespace: helmDev, Verb: "patch", Group: "networking.istio.io", Resource: "virtualservices"}, false},
		{authorizationv1.ResourceAttributes{Namespace: helmProd, Verb: "update", Resource: "services"}, false},
		{authorizationv1.ResourceAttributes{Namespace: helmProd, Verb: "list", Resource: "secrets"}, false},
		{authorizationv1.ResourceAttributes{Namespace: helmNS, Verb: "get", Resource: "configmaps", Name: "other"}, false},
		{authorizationv1.ResourceAttributes{Namespace: helmNS, Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Name: "other"}, false},
		{authorizationv1.ResourceAttributes{Namespace: prodNS, Verb: "list", Resource: "services"}, false},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "services"}, false}, // cluster-wide
	}
	for _, tc := range cases {
		attrs := tc.attrs
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: sa, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + helmNS}, ResourceAttributes: &attrs,
		}}
		got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed != tc.allow {
			t.Errorf("%s %s/%s %s in %q: allowed=%v, want %v", attrs.Verb, attrs.Group, attrs.Resource, attrs.Name, attrs.Namespace, got.Status.Allowed, tc.allow)
		}
	}
}

func runAsServiceAccount(t *testing.T) {
	cfg := cluster.RESTConfig()
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + helmNS + ":" + helmName,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + helmNS, "system:authenticated"},
	}
	sa, err := startOperator(cfg, types.NamespacedName{Namespace: helmNS, Name: helmName + "-config"}, helmName)
	if err != nil {
		t.Fatal(err)
	}
	defer sa.stop()
	if err := sa.waitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Its secure metrics endpoint reviews callers with the chart's metrics-auth ClusterRole.
	eventually(t, "metrics of the operator running under the chart's RBAC", func(context.Context) error {
		code, _, err := httpGetAs(sa.metricsURL, metricsToken)
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("status %d, want 200", code)
		}
		return nil
	})
	createReady(t, helmDev, "orders")
	prod := createReady(t, helmProd, "orders")
	eventually(t, "VirtualService written under the chart's RBAC", func(ctx context.Context) error {
		vs, err := getVS(ctx, helmProd, "orders-virtual-service")
		if err != nil {
			return err
		}
		return hasRoutes("vso-dev-helm-dev", "vso-default")(vs)
	})
	waitEvent(t, helmProd, "orders", "VirtualServiceCreated", "developer routes [helm-dev]")
	deleteService(t, helmProd, prod.Name)
	eventually(t, "VirtualService deleted under the chart's RBAC", func(ctx context.Context) error {
		_, err := getVS(ctx, helmProd, "orders-virtual-service")
		if err == nil {
			return errStillThere
		}
		return ignoreNotFound(err)
	})
}
