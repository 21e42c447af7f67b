package controller

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMetadataLag(t *testing.T) {
	c := newCopied([]string{"app.kubernetes.io/instance"}, []string{"kubectl.kubernetes.io/last-applied-configuration", "cert-manager.io/cluster-issuer"})
	source := func(labels, annotations map[string]string) metav1.Object {
		return &metav1.ObjectMeta{Name: "shop", Labels: labels, Annotations: annotations}
	}
	// What Kyverno generates from a source with team=a, the instance label, a name hash and a last-applied annotation.
	generated := func(labels, annotations map[string]string) metav1.Object {
		l := map[string]string{"virtual-ingress.io/virtualingress": "shop", "app.kubernetes.io/managed-by": "kyverno",
			"generate.kyverno.io/policy-name": "virtual-ingress-generate"}
		for k, v := range labels {
			l[k] = v
		}
		return &metav1.ObjectMeta{Name: "shop-generated", Labels: l, Annotations: annotations}
	}
	usual := map[string]string{"team": "a", "app.kubernetes.io/instance": "tenant", nameHashLabel: "x1",
		"app.kubernetes.io/managed-by": "argocd", "virtual-ingress.io/virtualingress": "not-me"}
	lastApplied := map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}", "note": "{{ x }}"}
	cases := []struct {
		name              string
		source, generated metav1.Object
		want              string
	}{
		{"up to date: excluded keys absent, Kyverno's labels and the back-reference its own",
			source(usual, lastApplied), generated(map[string]string{"team": "a"}, map[string]string{"note": "{{ x }}"}), ""},
		{"keys only the generated object has are someone else's",
			source(usual, nil), generated(map[string]string{"team": "a", "extra": "1"}, map[string]string{"theirs": "1"}), ""},
		{"a label edit not generated yet",
			source(usual, nil), generated(map[string]string{"team": "b"}, nil), "label team has another value"},
		{"a new annotation not copied yet",
			source(usual, lastApplied), generated(map[string]string{"team": "a"}, nil), "annotation note is not copied yet"},
		{"an annotation excluded after it was copied",
			source(usual, map[string]string{"cert-manager.io/cluster-issuer": "prod"}),
			generated(map[string]string{"team": "a"}, map[string]string{"cert-manager.io/cluster-issuer": "prod"}),
			"annotation cert-manager.io/cluster-issuer is excluded but still copied"},
		{"an excluded key set on the generated object by someone else is theirs",
			source(usual, map[string]string{"cert-manager.io/cluster-issuer": "prod"}),
			generated(map[string]string{"team": "a"}, map[string]string{"cert-manager.io/cluster-issuer": "staging"}), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := c.lag(tc.source, tc.generated, virtualIngressKind.backReferenceLabel)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("lag = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDecideReportsMetadataBehind(t *testing.T) {
	g := ingress(viUID, "svc-a")
	g.metadataLag = "annotation note is not copied yet"
	in := inputs{kind: virtualIngressKind, vi: resolvedView("True", "Resolved"), uid: viUID, generated: g}
	v := decide(in)
	if v.reason != ReasonOutOfDate || !v.transient || !v.repairable ||
		v.message != "Ingress shop-generated is behind the VirtualIngress: annotation note is not copied yet" {
		t.Fatalf("got %s transient=%v repairable=%v %q", v.reason, v.transient, v.repairable, v.message)
	}
	in.failure = "webhook said no"
	if v := decide(in); v.reason != ReasonGenerationFailed || !strings.Contains(v.message, "could not be updated: webhook said no") {
		t.Fatalf("with a failure: got %s %q", v.reason, v.message)
	}
}
