package attachment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Run on this process's own network namespace, as the init container runs in the Pod's: a network whose interface
// is not there fails with the reason, a Pod asking for none passes.
func TestRunChecksThisNamespace(t *testing.T) {
	dir := t.TempDir()
	write := func(content string) Options {
		path := filepath.Join(dir, "annotations")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return Options{Annotations: path}
	}
	n, err := write(NetworksAnnotation + `="ops/vlan-dns@no-such-if0"` + "\n").Run()
	if n != 1 || err == nil || !strings.Contains(err.Error(), "network ops/vlan-dns as interface no-such-if0") {
		t.Fatalf("a missing attachment: %d, %v", n, err)
	}
	if n, err := write("app=\"dns\"\n").Run(); n != 0 || err != nil {
		t.Fatalf("no secondary network asked for: %d, %v", n, err)
	}
	if _, err := (Options{Annotations: filepath.Join(dir, "missing")}).Run(); err == nil {
		t.Fatal("a missing annotations file passed")
	}
}
