package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The cache keeps a Secret's kubeconfig and nothing else of it.
func TestCachedSecretsHoldOnlyTheKubeconfig(t *testing.T) {
	in := &corev1.Secret{Data: map[string][]byte{"kubeconfig": []byte("k"), "ssh-privatekey": []byte("s"), ".dockerconfigjson": []byte("d")}}
	out, err := onlyKubeconfig(in)
	if err != nil {
		t.Fatal(err)
	}
	if d := out.(*corev1.Secret).Data; len(d) != 1 || string(d["kubeconfig"]) != "k" {
		t.Fatalf("cached data: %v", d)
	}
}
