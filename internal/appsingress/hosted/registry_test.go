package hosted

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func kubeconfig(server string) []byte {
	return []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)
}

// The informer of an AppsIngress is reused while its kubeconfig and Service stay, replaced when either changes, and
// gone after Stop. The servers here do not answer: the informers only retry in the background until stopped.
func TestEnsureRestartsOnKubeconfigChange(t *testing.T) {
	r := &Registry{Timeout: time.Second}
	key := types.NamespacedName{Namespace: "clusters", Name: "prod"}
	svc := types.NamespacedName{Namespace: "openshift-ingress", Name: "prod-apps"}
	first, err := r.Ensure(key, kubeconfig("https://127.0.0.1:1"), svc)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.Ensure(key, kubeconfig("https://127.0.0.1:1"), svc)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Fatal("an unchanged kubeconfig got a new informer")
	}
	rotated, err := r.Ensure(key, kubeconfig("https://127.0.0.1:2"), svc)
	if err != nil {
		t.Fatal(err)
	}
	if rotated == first || r.Len() != 1 {
		t.Fatalf("rotated kubeconfig: same informer %v, %d running", rotated == first, r.Len())
	}
	select {
	case <-first.stop:
	default:
		t.Fatal("the old informer was not stopped")
	}
	renamed, err := r.Ensure(key, kubeconfig("https://127.0.0.1:2"), types.NamespacedName{Namespace: "openshift-ingress", Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if renamed == rotated {
		t.Fatal("another Service kept the old informer")
	}
	r.Stop(key)
	if r.Len() != 0 {
		t.Fatalf("%d informers after Stop", r.Len())
	}
	if _, err := r.Ensure(key, []byte("not a kubeconfig"), svc); err == nil {
		t.Fatal("a broken kubeconfig was accepted")
	}
}
