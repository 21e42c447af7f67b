//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/helmrelease"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

// previousChartCommit holds the last chart version whose CRDs were in crds/, which Helm installs once and never
// upgrades; later versions render them from files/crds/ as templates of the release.
const previousChartCommit = "a988702e9d651cad9247445250838e258ac8e9be"

var crdGVR = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// chartCRDs are the CRDs the chart ships.
var chartCRDs = []string{"virtualingresses.virtual-ingress.io", "virtualhttproutes.virtual-ingress.io"}

// TestUpgradeFromPreviousChart installs the chart of previousChartCommit as a user did, with a resolved VirtualIngress,
// then upgrades to this chart: the upgrade must carry the CRD change and keep every object, and the CRDs must then be
// the release's and survive `helm uninstall`. It deletes the chart's CRDs first (a first install finds none), so it
// runs after TestVirtualIngress (file order), or alone.
func TestUpgradeFromPreviousChart(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if env.helm != nil {
		// A release left by an earlier test run with -run (its uninstall is its last scenario).
		stopStatusController()
		_ = env.helm.Uninstall()
	}
	deleteChartCRDs(ctx, t)

	env.engine = policyengine.GeneratingPolicy
	previous, err := helmrelease.New(env.cluster.Kubeconfig(), previousChart(t), "virtual-ingress", "virtual-ingress")
	if err != nil {
		t.Fatal(err)
	}
	if err := previous.Install(ctx, withEngine(nil)); err != nil {
		t.Fatalf("helm install of the previous chart: %v", err)
	}
	if err := env.cluster.WaitPoliciesReady(ctx, policyengine.PolicySelector); err != nil {
		t.Fatal(err)
	}
	startStatusController(t)
	waitAdmissionPoliciesEnforced(t)
	ns := newNamespace(t, "e2e-chart-upgrade")
	resolvedCoder(t, ns)
	vi := getVirtualIngress(t, ns, "coder")
	before := generatedIngressUIDs(t)
	oldCRD := getCRD(ctx, t, chartCRDs[0])
	if oldCRD.Annotations["meta.helm.sh/release-name"] != "" {
		t.Fatalf("the previous chart's CRD belongs to a release: %v", oldCRD.Annotations)
	}

	current, err := helmrelease.ForRepoChart(env.cluster.Kubeconfig(), env.repoRoot, "virtual-ingress")
	if err != nil {
		t.Fatal(err)
	}
	env.helm = current
	// Helm does not take over what it did not make: without the flag the upgrade is refused.
	if err := current.Upgrade(ctx, withEngine(nil)); err == nil || !strings.Contains(err.Error(), "invalid ownership metadata") {
		t.Fatalf("helm upgrade without --take-ownership: want Helm's refusal to adopt the CRDs, got %v", err)
	}
	if err := current.UpgradeTakingOwnership(ctx, withEngine(nil)); err != nil {
		t.Fatalf("helm upgrade --take-ownership: %v", err)
	}
	if err := env.cluster.WaitPoliciesReady(ctx, policyengine.PolicySelector); err != nil {
		t.Fatal(err)
	}
	startStatusController(t)

	for _, name := range chartCRDs {
		crd := getCRD(ctx, t, name)
		if crd.Annotations["meta.helm.sh/release-name"] != "virtual-ingress" || crd.Annotations["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s after the upgrade: annotations %v, want the release's and keep", name, crd.Annotations)
		}
		if want := fileCRD(t, name); !equalSchema(t, crd, want) {
			t.Errorf("CRD %s: the upgrade did not carry the chart's CRD (files/crds)", name)
		}
	}
	if equalSchema(t, oldCRD, fileCRD(t, chartCRDs[0])) {
		t.Error("the previous chart's VirtualIngress CRD is the current one: this test proves no CRD change")
	}
	assertIngressesKept(t, "helm upgrade from the previous chart", before)
	if now := getVirtualIngress(t, ns, "coder"); now.GetUID() != vi.GetUID() {
		t.Errorf("VirtualIngress recreated by the upgrade: uid %s, was %s", now.GetUID(), vi.GetUID())
	}
	// The upgraded release works: a new VirtualIngress gets its Ingress.
	resolvedCoder(t, newNamespace(t, "e2e-chart-upgraded"))

	before = generatedIngressUIDs(t)
	if err := current.Uninstall(); err != nil {
		t.Fatal(err)
	}
	for _, name := range chartCRDs {
		getCRD(ctx, t, name)
	}
	getVirtualIngress(t, ns, "coder")
	assertIngressesKept(t, "helm uninstall after the upgrade", before)
	stopStatusController()
}

// previousChart writes the chart of previousChartCommit into a temporary directory.
func previousChart(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	archive := exec.Command("git", "-C", env.repoRoot, "archive", previousChartCommit, "charts/virtual-ingress")
	untar := exec.Command("tar", "-x", "-C", dir)
	var err error
	if untar.Stdin, err = archive.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	archive.Stderr, untar.Stderr = os.Stderr, os.Stderr
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s (a shallow clone lacks it): %v", previousChartCommit, err)
	}
	if err := untar.Wait(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "charts", "virtual-ingress")
}

// deleteChartCRDs deletes the chart's CRDs, and with them every VirtualIngress and VirtualHTTPRoute, and waits until
// they are gone.
func deleteChartCRDs(ctx context.Context, t *testing.T) {
	t.Helper()
	for _, name := range chartCRDs {
		if err := env.dyn.Resource(crdGVR).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	eventually(t, "the chart's CRDs deleted", func() (bool, string, error) {
		for _, name := range chartCRDs {
			if _, err := env.dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, name + " still there", nil
			}
		}
		return true, "", nil
	})
}

func getCRD(ctx context.Context, t *testing.T, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	u, err := env.dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("CRD %s: %v", name, err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
		t.Fatal(err)
	}
	return &crd
}

// fileCRD is the CRD of that name in the chart's files/crds.
func fileCRD(t *testing.T, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(env.repoRoot, "charts", "virtual-ingress", "files", "crds", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if crd.Name == name {
			return &crd
		}
	}
	t.Fatalf("no CRD %s in files/crds", name)
	return nil
}

// equalSchema compares the served version's schema and printer columns, what a CRD change is about.
func equalSchema(t *testing.T, a, b *apiextensionsv1.CustomResourceDefinition) bool {
	t.Helper()
	version := func(c *apiextensionsv1.CustomResourceDefinition) string {
		data, err := yaml.Marshal([]any{c.Spec.Versions[0].Schema, c.Spec.Versions[0].AdditionalPrinterColumns})
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	return version(a) == version(b)
}
