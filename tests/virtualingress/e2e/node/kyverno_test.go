//go:build node

package node_test

import (
	"context"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
)

// kyvernoDeployments are the Deployments of Kyverno's chart and the replicas each must have Ready.
var kyvernoDeployments = map[string]int32{
	"kyverno-admission-controller":  2,
	"kyverno-background-controller": 1,
	"kyverno-cleanup-controller":    1,
	"kyverno-reports-controller":    1,
}

// TestKyvernoFromItsChart: the Kyverno under this tier is the one users run, installed by Helm from its chart as
// Pods on the node, with its admission webhooks reached through its Service and a CA of its own making; nothing of
// it runs on the host.
func TestKyvernoFromItsChart(t *testing.T) {
	ctx := context.Background()
	ns := devcluster.KyvernoNamespace
	for name, want := range kyvernoDeployments {
		d, err := node.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Labels["app.kubernetes.io/managed-by"] != "Helm" || d.Annotations["meta.helm.sh/release-name"] != "kyverno" {
			t.Errorf("Deployment %s: labels %v annotations %v, want Helm's release kyverno", name, d.Labels, d.Annotations)
		}
		if d.Status.ReadyReplicas != want {
			t.Errorf("Deployment %s: %d Ready replicas, want %d", name, d.Status.ReadyReplicas, want)
		}
	}
	if comps := node.Cluster.Components(); slices.Contains(comps, devcluster.ComponentKyverno) || slices.Contains(comps, devcluster.ComponentKyvernoBackground) {
		t.Errorf("Kyverno runs on the host as well: components %v", comps)
	}

	svc, err := node.Kube.CoreV1().Services(ns).Get(ctx, "kyverno-svc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	endpoints, err := node.Kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + svc.Name})
	if err != nil {
		t.Fatal(err)
	}
	ready := 0
	for _, s := range endpoints.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				ready++
			}
		}
	}
	if ready != int(kyvernoDeployments["kyverno-admission-controller"]) {
		t.Errorf("Service %s has %d Ready endpoints, want one per admission replica", svc.Name, ready)
	}

	ca, err := node.Kube.CoreV1().Secrets(ns).Get(ctx, "kyverno-svc.kyverno.svc.kyverno-tls-ca", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Kyverno's own CA: %v", err)
	}
	caPEM := ca.Data["tls.crt"]
	if len(caPEM) == 0 {
		t.Fatalf("Secret %s has no tls.crt", ca.Name)
	}
	validating, err := node.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mutating, err := node.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var configs []admissionregistrationv1.WebhookClientConfig
	var names []string
	for _, c := range validating.Items {
		for _, w := range c.Webhooks {
			configs, names = append(configs, w.ClientConfig), append(names, w.Name)
		}
	}
	for _, c := range mutating.Items {
		for _, w := range c.Webhooks {
			configs, names = append(configs, w.ClientConfig), append(names, w.Name)
		}
	}
	kyvernos := 0
	for i, cc := range configs {
		if cc.URL != nil {
			t.Errorf("webhook %s is called at URL %s, want through a Service", names[i], *cc.URL)
			continue
		}
		// The cleanup controller serves its own webhooks behind its own Service, with a CA of its own.
		if cc.Service == nil || cc.Service.Namespace != ns || cc.Service.Name != svc.Name {
			continue
		}
		kyvernos++
		if string(cc.CABundle) != string(caPEM) {
			t.Errorf("webhook %s: a CA bundle of %d bytes that is not Kyverno's own CA", names[i], len(cc.CABundle))
		}
	}
	if kyvernos == 0 {
		t.Errorf("no webhook served by Kyverno among %v", names)
	}
	t.Logf("%d of Kyverno's webhooks served through Service %s (%d endpoints)", kyvernos, svc.Name, ready)
}
