package repo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadVersionsMatchesTheCommittedModules(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	v, err := ReadVersions(root)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := KubeVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	// The API server the devcluster builds is the version the charts are rendered for.
	if v.Kubernetes != kube {
		t.Errorf("k8s.io/kubernetes %s in tools/devcluster/binaries, but k8s.io/client-go says %s", v.Kubernetes, kube)
	}
	for name, got := range map[string]string{"etcd": v.Etcd, "kyverno": v.Kyverno} {
		if len(got) < 2 || got[0] != 'v' {
			t.Errorf("%s version %q", name, got)
		}
	}
}

func TestRequiredVersionSkipsReplacements(t *testing.T) {
	f := filepath.Join(t.TempDir(), "go.mod")
	goMod := "module x\n\nrequire k8s.io/api v0.36.3\n\nreplace (\n\tk8s.io/api => k8s.io/api v0.1.0\n)\n\nrequire (\n\tk8s.io/client-go v0.35.1 // indirect\n)\n"
	if err := os.WriteFile(f, []byte(goMod), 0o644); err != nil {
		t.Fatal(err)
	}
	for module, want := range map[string]string{"k8s.io/api": "v0.36.3", "k8s.io/client-go": "v0.35.1"} {
		if got, err := RequiredVersion(f, module); err != nil || got != want {
			t.Errorf("RequiredVersion(%s) = %q, %v; want %q", module, got, err, want)
		}
	}
	if _, err := RequiredVersion(f, "k8s.io/apimachinery"); err == nil {
		t.Error("want an error for a module go.mod does not require")
	}
}

func TestKubeVersionFollowsClientGo(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n\nrequire k8s.io/client-go v0.37.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := KubeVersion(root); err != nil || got != "v1.37.2" {
		t.Errorf("KubeVersion = %q, %v; want v1.37.2", got, err)
	}
}
