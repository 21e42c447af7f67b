//go:build devcluster

package devcluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/poll"
)

// The cluster tests build binaries (minutes, once) and start processes (seconds to a minute), so they sit behind
// a build tag: go test -tags devcluster ./internal/testkit/devcluster/ (make devcluster-test, part of make test).
var cluster *devcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(runWithCluster(m))
}

func runWithCluster(m *testing.M) int {
	dir, err := os.MkdirTemp("", "devcluster-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	begin := time.Now()
	cluster, err = devcluster.Start(ctx, devcluster.Options{Dir: dir, WithKyverno: true, Timeout: 5 * time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "cluster with Kyverno up in %s\n", time.Since(begin).Round(100*time.Millisecond))
	pids := readPids(dir)

	code := m.Run()

	if err := cluster.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
		return 1
	}
	for name, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			fmt.Fprintf(os.Stderr, "%s (pid %d) still running after Stop\n", name, pid)
			code = 1
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		fmt.Fprintf(os.Stderr, "%s still exists after Stop\n", dir)
		code = 1
	}
	return code
}

func readPids(dir string) map[string]int {
	files, _ := filepath.Glob(filepath.Join(dir, "pids", "*.pid"))
	pids := map[string]int{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
		}
	}
	return pids
}

func needCluster(t *testing.T) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	cfg := cluster.RESTConfig()
	cfg.WarningHandler = rest.NoWarnings{}
	return kubernetes.NewForConfigOrDie(cfg), dynamic.NewForConfigOrDie(cfg)
}

// eventually waits (poll.Until) until cond holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	poll.Until(t, timeout, what, func() (bool, string, error) {
		ok, err := cond()
		return ok, "", err
	})
}

func TestGarbageCollection(t *testing.T) {
	kube, _ := needCluster(t)
	ctx := t.Context()
	cms := kube.CoreV1().ConfigMaps("default")
	owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gc-owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "gc-dependent",
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
		}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the garbage collector to delete gc-dependent", func() (bool, error) {
		_, err := cms.Get(ctx, "gc-dependent", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

func TestNamespaceDeletion(t *testing.T) {
	kube, _ := needCluster(t)
	ctx := t.Context()
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns-deletion"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns.Name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the namespace controller to finish deleting ns-deletion", func() (bool, error) {
		_, err := kube.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

// TestKyvernoIdentities checks that each controller talks to the API server as its own ServiceAccount.
func TestKyvernoIdentities(t *testing.T) {
	needCluster(t)
	for component, want := range map[string]string{
		devcluster.ComponentKyverno:           "system:serviceaccount:kyverno:kyverno-admission-controller",
		devcluster.ComponentKyvernoBackground: "system:serviceaccount:kyverno:kyverno-background-controller",
	} {
		cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(cluster.Dir(), component+".kubeconfig"))
		if err != nil {
			t.Fatal(err)
		}
		review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().
			Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := review.Status.UserInfo.Username; got != want {
			t.Errorf("%s authenticates as %q, want %q", component, got, want)
		}
	}
}

var clusterPolicies = schema.GroupVersionResource{Group: "kyverno.io", Version: "v1", Resource: "clusterpolicies"}

// TestKyvernoGenerate runs a generate rule end to end, including a restart of the background controller
// with work queued while it was down.
func TestKyvernoGenerate(t *testing.T) {
	kube, dyn := needCluster(t)
	ctx := t.Context()

	// Kyverno's chart gives its controllers no access to Secrets (their `view` bindings exclude them). A chart
	// whose policies generate Secrets adds the rights through aggregation, as done here: the background
	// controller creates them, and the admission controller refuses the policy unless it may get and list
	// them itself.
	const backgroundSA = "system:serviceaccount:kyverno:kyverno-background-controller"
	mayCreateSecrets := func() (bool, error) {
		review, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User:   backgroundSA,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kyverno", "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: "generate-1", Verb: "create", Resource: "secrets",
				},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return review.Status.Allowed, fmt.Errorf("not allowed: %s", review.Status.Reason)
	}
	if ok, err := mayCreateSecrets(); ok || !strings.HasPrefix(err.Error(), "not allowed") {
		t.Fatalf("before aggregation: allowed=%v, %v; want a denial", ok, err)
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "devcluster-test:generate-secrets",
			Labels: map[string]string{"rbac.kyverno.io/aggregate-to-background-controller": "true"},
		},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"secrets"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
		}},
	}
	admissionRole := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "devcluster-test:read-secrets",
			Labels: map[string]string{"rbac.kyverno.io/aggregate-to-admission-controller": "true"},
		},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}},
	}
	for _, r := range []*rbacv1.ClusterRole{role, admissionRole} {
		if _, err := kube.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = kube.RbacV1().ClusterRoles().Delete(context.Background(), r.Name, metav1.DeleteOptions{})
		})
	}
	eventually(t, time.Minute, "aggregation to let "+backgroundSA+" create Secrets", mayCreateSecrets)

	policy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kyverno.io/v1",
		"kind":       "ClusterPolicy",
		"metadata":   map[string]any{"name": "devcluster-test-generate"},
		"spec": map[string]any{
			"rules": []any{map[string]any{
				"name": "namespace-secret",
				"match": map[string]any{"any": []any{map[string]any{"resources": map[string]any{
					"kinds":    []any{"Namespace"},
					"selector": map[string]any{"matchLabels": map[string]any{"devcluster-test": "generate"}},
				}}}},
				"generate": map[string]any{
					"apiVersion":  "v1",
					"kind":        "Secret",
					"name":        "generated",
					"namespace":   "{{request.object.metadata.name}}",
					"synchronize": true,
					"data": map[string]any{
						"type": "Opaque",
						"data": map[string]any{"namespace": "{{ base64_encode(request.object.metadata.name) }}"},
					},
				},
			}},
		},
	}}
	createPolicy(t, dyn, policy)

	generated := func(ns string) func() (bool, error) {
		return func() (bool, error) {
			secret, err := kube.CoreV1().Secrets(ns).Get(ctx, "generated", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return string(secret.Data["namespace"]) == ns, fmt.Errorf("data: %q", secret.Data)
		}
	}
	createNS := func(name string) {
		t.Helper()
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: map[string]string{"devcluster-test": "generate"},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}

	start := time.Now()
	createNS("generate-1")
	eventually(t, time.Minute, "Kyverno to generate generate-1/generated", generated("generate-1"))
	t.Logf("generated Secret appeared %s after the namespace was created", time.Since(start).Round(time.Millisecond))

	// With the background controller stopped the admission controller still records the work (an
	// UpdateRequest); the restarted controller must pick it up.
	if err := cluster.StopComponent(devcluster.ComponentKyvernoBackground); err != nil {
		t.Fatal(err)
	}
	createNS("generate-2")
	time.Sleep(3 * time.Second)
	if _, err := kube.CoreV1().Secrets("generate-2").Get(ctx, "generated", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Secret generated while the background controller was stopped (err=%v)", err)
	}
	start = time.Now()
	if err := cluster.StartComponent(ctx, devcluster.ComponentKyvernoBackground); err != nil {
		t.Fatal(err)
	}
	t.Logf("background controller restarted and leading in %s", time.Since(start).Round(time.Millisecond))
	eventually(t, time.Minute, "the restarted background controller to generate generate-2/generated", generated("generate-2"))
	t.Logf("queued Secret generated %s after the restart began", time.Since(start).Round(time.Millisecond))

	if logs := cluster.Logs(devcluster.ComponentKyvernoBackground); strings.Count(logs, "\n") < 10 {
		t.Errorf("Logs(%q) is not the tail of a running controller's log:\n%s", devcluster.ComponentKyvernoBackground, logs)
	}
}

// createPolicy creates a ClusterPolicy, deleted when t ends, and waits until Kyverno says it is Ready.
func createPolicy(t *testing.T, dyn dynamic.Interface, policy *unstructured.Unstructured) {
	t.Helper()
	ctx, name := t.Context(), policy.GetName()
	// Creation can race an aggregation into kyverno:admission-controller: Kyverno checks its rights then.
	eventually(t, time.Minute, "ClusterPolicy "+name+" to be accepted", func() (bool, error) {
		_, err := dyn.Resource(clusterPolicies).Create(ctx, policy, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), err
	})
	t.Cleanup(func() {
		_ = dyn.Resource(clusterPolicies).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	eventually(t, time.Minute, "ClusterPolicy "+name+" to become Ready", func() (bool, error) {
		got, err := dyn.Resource(clusterPolicies).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, fmt.Errorf("status: %v", got.Object["status"])
	})
}
