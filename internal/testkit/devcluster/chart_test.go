package devcluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
)

// pinnedKyvernoDir is the directory of the Kyverno module the devcluster builds from.
func pinnedKyvernoDir(t *testing.T) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	modDir, err := kyvernoModuleDir(t.Context(), root, kyvernoModule)
	if err != nil {
		t.Fatalf("Kyverno's module is not available: %v", err)
	}
	return modDir
}

// TestKyvernoChartGivesControllers renders Kyverno's own chart as Start does and checks that it yields what
// the processes are configured from.
func TestKyvernoChartGivesControllers(t *testing.T) {
	modDir := pinnedKyvernoDir(t)
	inst, kinds, err := renderKyverno(modDir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kyvernoChartKinds {
		if kinds[k] == 0 {
			t.Errorf("chart rendered no %s", k)
		}
	}
	if inst.admission.serviceAccount != "kyverno-admission-controller" || inst.background.serviceAccount != "kyverno-background-controller" {
		t.Errorf("service accounts %q, %q", inst.admission.serviceAccount, inst.background.serviceAccount)
	}
	for _, want := range []string{"--caSecretName=", "--backgroundServiceAccountName=system:serviceaccount:kyverno:kyverno-background-controller"} {
		if !strings.Contains(strings.Join(inst.admission.args, " "), want) {
			t.Errorf("admission args %q lack %q", inst.admission.args, want)
		}
	}
	// The CRD watcher in both controllers (see renderKyvernoObjects): a kind created after a controller filled its
	// discovery cache is otherwise unknown to it for 15 minutes.
	for name, args := range map[string][]string{"admission": inst.admission.args, "background": inst.background.args} {
		if !slices.Contains(args, "--crdWatcher=true") {
			t.Errorf("%s args %q lack --crdWatcher=true", name, args)
		}
	}
	env := strings.Join(inst.admission.env, " ")
	for _, want := range []string{"KYVERNO_NAMESPACE=kyverno", "KYVERNO_SERVICEACCOUNT_NAME=kyverno-admission-controller", "KYVERNO_POD_NAME=", "INIT_CONFIG=kyverno", "METRICS_CONFIG=kyverno-metrics"} {
		if !strings.Contains(env, want) {
			t.Errorf("admission env %q lacks %q", inst.admission.env, want)
		}
	}
	t.Logf("admission: %q %q", inst.admission.args, inst.admission.env)
	t.Logf("background: %q %q", inst.background.args, inst.background.env)
}

// renderKyverno is renderKyvernoObjects with a count of the objects to apply by kind.
func renderKyverno(modDir, dataDir string) (*kyvernoInstall, map[string]int, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, nil, err
	}
	inst, objs, err := renderKyvernoObjects(root, modDir, dataDir)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	return inst, kinds, err
}
