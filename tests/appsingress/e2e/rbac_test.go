//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/tests/appsingress/localenv"
)

// rbacKinds are the chart's objects that decide what the operator may do.
var rbacKinds = map[string]schema.GroupVersionResource{
	"ClusterRole":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"ClusterRoleBinding": {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	"Role":               {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
}

// operatorConfig applies the chart's RBAC (rendered with hostedClusterNamespaces: [clusters]) to the management
// cluster and returns a client configuration authenticating as the chart's ServiceAccount: every write of the
// operator in the tests goes through the permissions the chart grants, no more.
func operatorConfig(ctx context.Context) (*rest.Config, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	if render.Namespace != operatorNS {
		return nil, fmt.Errorf("the chart renders into %s, the test expects %s", render.Namespace, operatorNS)
	}
	docs, err := render.Render(filepath.Join(root, "charts", "apps-ingress-operator"), nil, map[string]any{
		"hostedClusterNamespaces": []any{clustersNS},
		// The Roles name every shard ConfigMap the operator writes.
		"configShards": localenv.ConfigShards,
	})
	if err != nil {
		return nil, err
	}
	applied := 0
	for _, d := range docs {
		gvr, ok := rbacKinds[d.Object.GetKind()]
		if !ok {
			continue
		}
		ri := mgmtDyn.Resource(gvr)
		var data []byte
		if data, err = d.Object.MarshalJSON(); err != nil {
			return nil, err
		}
		if ns := d.Object.GetNamespace(); ns != "" {
			_, err = ri.Namespace(ns).Patch(ctx, d.Object.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "e2e", Force: ptrTrue()})
		} else {
			_, err = ri.Patch(ctx, d.Object.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "e2e", Force: ptrTrue()})
		}
		if err != nil {
			return nil, fmt.Errorf("applying the chart's %s %s: %w", d.Object.GetKind(), d.Object.GetName(), err)
		}
		applied++
	}
	if applied == 0 || !slices.ContainsFunc(docs, func(d render.Document) bool {
		return d.Object.GetKind() == "ServiceAccount" && d.Object.GetName() == operatorSA
	}) {
		return nil, fmt.Errorf("the chart rendered no RBAC or no ServiceAccount %s", operatorSA)
	}
	return mgmt.ServiceAccountConfig(ctx, operatorNS, operatorSA)
}

func ptrTrue() *bool { b := true; return &b }

// TestOperatorRightsAreLimited: the chart's ServiceAccount, which the operator runs as in these tests, cannot read
// Secrets outside hostedClusterNamespaces nor write ConfigMaps other than its two.
func TestOperatorRightsAreLimited(t *testing.T) {
	ctx := context.Background()
	cfg, err := mgmt.ServiceAccountConfig(ctx, operatorNS, operatorSA)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets in kube-system: %v, want Forbidden", err)
	}
	if _, err := kube.CoreV1().Secrets(clustersNS).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing Secrets in %s: %v", clustersNS, err)
	}
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: "someone-elses"}}
	if _, err := mgmtKube.CoreV1().ConfigMaps(operatorNS).Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	other.Data = map[string]string{"x": "y"}
	if _, err := kube.CoreV1().ConfigMaps(operatorNS).Update(ctx, other, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("updating another ConfigMap: %v, want Forbidden", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(operatorNS).Get(ctx, dnsMapName, metav1.GetOptions{}); err != nil {
		t.Errorf("reading its own ConfigMap: %v", err)
	}
}
