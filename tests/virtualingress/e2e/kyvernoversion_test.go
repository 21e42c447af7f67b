//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testKyvernoVersionNoted: the release notes name the Kyverno running beside the chart and warn when it is outside
// the supported range, or missing. Kyverno runs as processes here, so a Deployment shaped like the one Kyverno's
// chart makes (its admission controller, container "kyverno") stands in for it; it has no node to run on.
func testKyvernoVersionNoted(t *testing.T) {
	ctx := context.Background()
	notes := func(when string) string {
		t.Helper()
		n, err := env.helm.Notes(ctx, withEngine(nil))
		if err != nil {
			t.Fatalf("%s: helm upgrade --dry-run=server: %v", when, err)
		}
		return n
	}
	want := func(when, notes string, parts ...string) {
		t.Helper()
		for _, p := range parts {
			if !strings.Contains(notes, p) {
				t.Errorf("%s: the notes lack %q:\n%s", when, p, notes)
			}
		}
	}
	want("no Kyverno Deployment", notes("no Kyverno Deployment"), "WARNING: no Kyverno admission controller runs in namespace kyverno")

	deployments := env.kube.AppsV1().Deployments("kyverno")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "kyverno-admission-controller",
			Labels: map[string]string{"app.kubernetes.io/component": "admission-controller", "app.kubernetes.io/version": "3.8.0"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "stand-in"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "stand-in"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "kyverno", Image: "reg.example/kyverno/kyverno:v1.18.2"}}},
			},
		},
	}
	if _, err := deployments.Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deployments.Delete(context.Background(), d.Name, metav1.DeleteOptions{}) })
	want("Kyverno 1.18.2", notes("Kyverno 1.18.2"), "WARNING: Kyverno 1.18.2 runs in namespace kyverno; this chart supports Kyverno >=1.19.0-0 <1.20.0-0")

	d.Spec.Template.Spec.Containers[0].Image = "reg.example/kyverno/kyverno:v1.19.1@sha256:" + strings.Repeat("0", 64)
	if _, err := deployments.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n := notes("Kyverno 1.19.1")
	want("Kyverno 1.19.1", n, "Kyverno 1.19.1 runs in namespace kyverno (supported: >=1.19.0-0 <1.20.0-0)")
	if strings.Contains(n, "WARNING") {
		t.Errorf("Kyverno 1.19.1: the notes warn:\n%s", n)
	}
}
