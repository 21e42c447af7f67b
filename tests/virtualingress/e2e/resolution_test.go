//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

func testCreatedBeforeService(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-pending")
	createVirtualIngress(t, virtualIngress(ns, "coder", virtualingress.CoderSpec(relayLabels())))

	vi := waitReady(t, ns, "coder", "False", "Unresolved")
	backend := virtualingress.Backends(vi)["spec.rules[0].http.paths[0].backend"]
	if backend.State != v1alpha1.BackendNoMatch || !strings.Contains(backend.Message, "cluster.x-k8s.io/tenant-service-name=relay-family") {
		t.Fatalf("status does not name the unresolved selector: %v", backend)
	}
	assertNoIngress(t, ns, virtualingress.GeneratedName("coder"))

	name := ccmName(t)
	createService(t, ns, name, relayLabels())
	waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), name)
	waitReady(t, ns, "coder", "True", "IngressUpToDate")
}

func testServiceRecreated(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-recreate")
	first, ing := resolvedCoder(t, ns)

	// Watch the Ingress from here on: it must never be deleted, whatever happens to the Service.
	w, err := env.kube.NetworkingV1().Ingresses(ns).Watch(context.Background(), metav1.ListOptions{
		FieldSelector: "metadata.name=" + virtualingress.GeneratedName("coder"), ResourceVersion: ing.ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var deletions []string
	events := make(chan struct{})
	go func() {
		defer close(events)
		for ev := range w.ResultChan() {
			if ev.Type == watch.Deleted {
				deletions = append(deletions, time.Now().Format(time.RFC3339Nano))
			}
		}
	}()

	deleteService(t, ns, first)
	vi := waitReady(t, ns, "coder", "False", "Stale")
	if got := virtualingress.Backends(vi)["spec.rules[0].http.paths[0].backend"].Service; got != first {
		t.Fatalf("stale backend keeps %v, want %s", got, first)
	}
	waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), first)

	second := ccmName(t)
	created := time.Now()
	createService(t, ns, second, relayLabels())
	after := waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), second)
	t.Logf("Ingress followed the recreated Service in %s", time.Since(created).Round(time.Millisecond))
	waitReady(t, ns, "coder", "True", "IngressUpToDate")

	w.Stop()
	<-events
	if len(deletions) > 0 {
		t.Fatalf("the Ingress was deleted at %v", deletions)
	}
	if after.UID != ing.UID {
		t.Fatalf("the Ingress was replaced: UID %s, was %s", after.UID, ing.UID)
	}
}

func testSeveralBackends(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-backends")
	relay, grafana := ccmName(t), ccmName(t)
	grafanaLabels := map[string]string{"cluster.x-k8s.io/tenant-service-name": "grafana"}
	createService(t, ns, relay, relayLabels())
	createService(t, ns, grafana, grafanaLabels)
	createVirtualIngress(t, virtualIngress(ns, "portal", map[string]any{
		"defaultBackend": virtualingress.SelectorBackend(grafanaLabels, 80),
		"rules": []any{
			virtualingress.Rule("portal.example.org",
				virtualingress.Path("/relay", virtualingress.SelectorBackend(relayLabels(), 80)),
				virtualingress.Path("/static", virtualingress.NamedBackend("static-site", 8080))),
			virtualingress.Rule("grafana.example.org", virtualingress.Path("/", virtualingress.SelectorBackend(grafanaLabels, 80))),
		},
	}))
	waitIngressServices(t, ns, virtualingress.GeneratedName("portal"), grafana, relay, "static-site", grafana)
	waitReady(t, ns, "portal", "True", "IngressUpToDate")
}

func testMultipleMatchesError(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-multi")
	labels := map[string]string{"app": "web"}
	createService(t, ns, "web-blue", labels)
	createVirtualIngress(t, virtualIngress(ns, "web", virtualingress.CoderSpec(labels)))
	ing := waitIngressServices(t, ns, virtualingress.GeneratedName("web"), "web-blue")

	// A second match: the Ingress must stay on web-blue and status must list both.
	createService(t, ns, "web-green", labels)
	vi := waitReady(t, ns, "web", "False", "Stale")
	backend := virtualingress.Backends(vi)["spec.rules[0].http.paths[0].backend"]
	if fmt.Sprint(backend.Candidates) != "[web-blue web-green]" || backend.Service != "web-blue" {
		t.Fatalf("status: %v", backend)
	}
	if now := waitIngressServices(t, ns, virtualingress.GeneratedName("web"), "web-blue"); now.UID != ing.UID {
		t.Fatal("Ingress replaced")
	}

	// A VirtualIngress created while both match gets no Ingress at all.
	createVirtualIngress(t, virtualIngress(ns, "web2", virtualingress.CoderSpec(labels)))
	vi = waitReady(t, ns, "web2", "False", "Unresolved")
	if got := virtualingress.Backends(vi)["spec.rules[0].http.paths[0].backend"].State; got != v1alpha1.BackendMultipleMatches {
		t.Fatalf("state %v, want MultipleMatches", got)
	}
	assertNoIngress(t, ns, virtualingress.GeneratedName("web2"))
}

func testGarbageCollection(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-gc")
	name, _ := resolvedCoder(t, ns)

	if err := env.dyn.Resource(virtualIngressGVR).Namespace(ns).Delete(context.Background(), "coder", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Ingress garbage collected", func() (bool, string, error) {
		_, err := getIngress(ns, virtualingress.GeneratedName("coder"))
		return err != nil, fmt.Sprint(err), nil
	})
	// The Service is not the VirtualIngress's to delete.
	if _, err := env.kube.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
		t.Fatalf("Service gone with the VirtualIngress: %v", err)
	}
}

func testEdits(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-edit")
	relay, wiki := ccmName(t), ccmName(t)
	wikiLabels := map[string]string{"cluster.x-k8s.io/tenant-service-name": "wiki"}
	createService(t, ns, relay, relayLabels())
	createService(t, ns, wiki, wikiLabels)
	createVirtualIngress(t, virtualIngress(ns, "coder", virtualingress.CoderSpec(relayLabels())))
	before := waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), relay)

	// Kyverno may touch the VirtualIngress (status.lastServiceEvent) between our read and write: retry on a conflict
	// from a fresh read, as any client of the API must.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vi := getVirtualIngress(t, ns, "coder")
		rules, _, _ := unstructured.NestedSlice(vi.Object, "spec", "rules")
		r := rules[0].(map[string]any)
		r["host"] = "code.enigma.vgijssel.nl"
		paths := r["http"].(map[string]any)["paths"].([]any)
		r["http"].(map[string]any)["paths"] = append(paths, virtualingress.Path("/wiki", virtualingress.SelectorBackend(wikiLabels, 80)))
		if err := unstructured.SetNestedSlice(vi.Object, rules, "spec", "rules"); err != nil {
			return err
		}
		annotations := vi.GetAnnotations()
		annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"] = "600"
		vi.SetAnnotations(annotations)
		_, err := env.dyn.Resource(virtualIngressGVR).Namespace(ns).Update(context.Background(), vi, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	eventually(t, "Ingress follows the edit", func() (bool, string, error) {
		ing, err := getIngress(ns, virtualingress.GeneratedName("coder"))
		if err != nil {
			return false, "", err
		}
		got := fmt.Sprintf("%s %v %s", ing.Spec.Rules[0].Host, ingressServices(ing), ing.Annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"])
		want := fmt.Sprintf("code.enigma.vgijssel.nl %v 600", []string{relay, wiki})
		return got == want && ing.UID == before.UID, got, nil
	})
}

func testAnnotations(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-meta")
	name := ccmName(t)
	createService(t, ns, name, relayLabels())
	vi := createVirtualIngress(t, virtualIngress(ns, "coder", virtualingress.CoderSpec(relayLabels())))
	ing := waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), name)

	for _, k := range []string{
		"cert-manager.io/cluster-issuer", "nginx.ingress.kubernetes.io/proxy-http-version",
		"nginx.ingress.kubernetes.io/proxy-buffering", "nginx.ingress.kubernetes.io/proxy-read-timeout",
		"nginx.ingress.kubernetes.io/proxy-send-timeout",
	} {
		if ing.Annotations[k] != vi.GetAnnotations()[k] {
			t.Errorf("annotation %s = %q, want %q", k, ing.Annotations[k], vi.GetAnnotations()[k])
		}
	}
	for _, k := range []string{"kubectl.kubernetes.io/last-applied-configuration", "argocd.argoproj.io/tracking-id"} {
		if _, ok := ing.Annotations[k]; ok {
			t.Errorf("excluded annotation %s copied", k)
		}
	}
	if ing.Labels["team"] != "platform" || ing.Labels["virtual-ingress.io/virtualingress"] != "coder" {
		t.Errorf("labels %v", ing.Labels)
	}
	if _, ok := ing.Labels["app.kubernetes.io/instance"]; ok {
		t.Errorf("excluded label app.kubernetes.io/instance copied")
	}
	owners := ing.OwnerReferences
	if len(owners) != 1 || owners[0].UID != vi.GetUID() || owners[0].Controller == nil || !*owners[0].Controller {
		t.Errorf("ownerReferences %+v, want the VirtualIngress %s as controller", owners, vi.GetUID())
	}
}

func testBadInput(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-invalid")
	backendWith := func(service map[string]any) map[string]any {
		return map[string]any{"rules": []any{virtualingress.Rule("x.example.org", virtualingress.Path("/", map[string]any{"service": service}))}}
	}
	port := map[string]any{"number": int64(80)}
	selected := virtualingress.SelectorBackend(map[string]string{"a": "b"}, 80)
	withHost := func(host string) map[string]any {
		return map[string]any{"rules": []any{virtualingress.Rule(host, virtualingress.Path("/", selected))}}
	}
	withField := func(field string, value any) map[string]any {
		spec := withHost("x.example.org")
		spec[field] = value
		return spec
	}
	manyBackends := func(n int) map[string]any {
		paths := make([]map[string]any, n)
		for i := range paths {
			paths[i] = virtualingress.Path(fmt.Sprintf("/p%d", i), selected)
		}
		return map[string]any{"rules": []any{virtualingress.Rule("x.example.org", paths...)}}
	}
	cases := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"name and matchLabels", backendWith(map[string]any{"name": "a", "matchLabels": map[string]any{"a": "b"}, "port": port}),
			[]string{"spec.rules[0].http.paths[0].backend.service", "exactly one of name or matchLabels must be set"}},
		{"empty matchLabels", backendWith(map[string]any{"matchLabels": map[string]any{}, "port": port}),
			[]string{"spec.rules[0].http.paths[0].backend.service.matchLabels", "matchLabels must not be empty"}},
		{"invalid label key", backendWith(map[string]any{"matchLabels": map[string]any{"bad key!": "x"}, "port": port}),
			[]string{"spec.rules[0].http.paths[0].backend.service.matchLabels", "valid label keys"}},
		{"missing port", backendWith(map[string]any{"matchLabels": map[string]any{"a": "b"}}),
			[]string{"spec.rules[0].http.paths[0].backend.service.port", "Required value"}},
		// What the Ingress API refuses is refused here, where the user writes it, not when Kyverno writes the Ingress.
		{"host *", withHost("*"), []string{"spec.rules[0].host", "a host must be a DNS name"}},
		{"host a b;{}", withHost("a b;{}"), []string{"spec.rules[0].host", "a host must be a DNS name"}},
		{"host 10.0.0.1", withHost("10.0.0.1"), []string{"spec.rules[0].host", "no IP address"}},
		{"path abc", map[string]any{"rules": []any{virtualingress.Rule("x.example.org", virtualingress.Path("abc", selected))}},
			[]string{"spec.rules[0].http.paths[0].path", "path must be an absolute path"}},
		{"ingressClassName Other Class!", withField("ingressClassName", "Other Class!"),
			[]string{"spec.ingressClassName", "must be the name of an IngressClass"}},
		{"port name AB_;{}", backendWith(map[string]any{"matchLabels": map[string]any{"a": "b"}, "port": map[string]any{"name": "AB_;{}"}}),
			[]string{"spec.rules[0].http.paths[0].backend.service.port.name", "IANA_SVC_NAME"}},
		{"secretName other-ns/secret", withField("tls", []any{map[string]any{"hosts": []any{"x.example.org"}, "secretName": "other-ns/secret"}}),
			[]string{"spec.tls[0].secretName", "no namespace prefix"}},
		{"33 label-selected backends", manyBackends(33), []string{"at most 32 backends may select their Service by matchLabels"}},
	}
	for i, c := range cases {
		name := fmt.Sprintf("bad-%d", i)
		_, err := env.dyn.Resource(virtualIngressGVR).Namespace(ns).Create(context.Background(),
			virtualIngress(ns, name, c.spec), metav1.CreateOptions{FieldValidation: "Strict"})
		assertRefusal(t, c.name, err, c.want)
	}
	list, err := env.dyn.Resource(virtualIngressGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ingresses, err := env.kube.NetworkingV1().Ingresses(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 || len(ingresses.Items) != 0 {
		t.Fatalf("rejected input left %d VirtualIngresses and %d Ingresses", len(list.Items), len(ingresses.Items))
	}
}

// assertRefusal checks that the API server refused a bad object (what) with an error naming every part of want.
func assertRefusal(t *testing.T, what string, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted", what)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not mention %q", what, err, w)
		}
	}
}
