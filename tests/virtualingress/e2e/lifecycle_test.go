//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/policyengine"
)

func testBackgroundControllerRestart(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-restart")
	first, before := resolvedCoder(t, ns)

	startBackground := stopBackgroundController(t)
	deleteService(t, ns, first)
	second := ccmName(t)
	createService(t, ns, second, relayLabels())
	// Without the background controller nothing may have touched the Ingress yet.
	if ing, err := getIngress(ns, virtualingress.GeneratedName("coder")); err != nil || ingressServices(ing)[0] != first {
		t.Fatalf("Ingress changed while the background controller was down: %v %v", err, ing)
	}

	startBackground()
	after := waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), second)
	if after.UID != before.UID {
		t.Fatal("Ingress replaced")
	}
}

// testQueuedReportedOnce: a new VirtualIngress whose request waits in Kyverno's queue (here: the background controller
// is down) gets no Ready=False report past the grace, only the one report once its Ingress exists. Reporting it
// meanwhile would be one more write per VirtualIngress for Kyverno to process when thousands wait.
func testQueuedReportedOnce(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-queued")
	service := ccmName(t)
	createService(t, ns, service, relayLabels())
	startBackground := stopBackgroundController(t)
	createVirtualIngress(t, virtualIngress(ns, "coder", virtualingress.CoderSpec(relayLabels())))
	eventually(t, "a pending UpdateRequest for the VirtualIngress", func() (bool, string, error) {
		found, err := pendingRequestFor(ns, "coder")
		return found, "", err
	})
	// Three graces: the controller would have reported the missing Ingress by now, were the request not pending.
	time.Sleep(3 * statusControllerTimings.Grace)
	vi := getVirtualIngress(t, ns, "coder")
	if status, reason, _ := virtualingress.Condition(vi, "Ready"); status != "" {
		t.Fatalf("Ready=%s %s while Kyverno still holds the request, want no Ready condition yet", status, reason)
	}
	if status, _, _ := virtualingress.Condition(vi, "Resolved"); status != "True" {
		t.Fatalf("Resolved=%q, want True", status)
	}

	startBackground()
	waitIngressServices(t, ns, virtualingress.GeneratedName("coder"), service)
	waitReady(t, ns, "coder", "True", "IngressUpToDate")
	waitEvent(t, ns, "coder", "IngressUpToDate")
	reasons, err := eventReasons(ns, "coder")
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) != 1 {
		t.Fatalf("Events on the VirtualIngress: %v, want the one IngressUpToDate", reasons)
	}
}

// stopBackgroundController stops Kyverno's background controller until the returned function starts it again, or the
// test ends.
func stopBackgroundController(t *testing.T) (start func()) {
	t.Helper()
	if err := env.cluster.StopComponent(devcluster.ComponentKyvernoBackground); err != nil {
		t.Fatal(err)
	}
	started := false
	t.Cleanup(func() {
		if !started {
			_ = env.cluster.StartComponent(context.Background(), devcluster.ComponentKyvernoBackground)
		}
	})
	return func() {
		t.Helper()
		if err := env.cluster.StartComponent(context.Background(), devcluster.ComponentKyvernoBackground); err != nil {
			t.Fatal(err)
		}
		started = true
	}
}

// testNamespaceRestrictions excludes one namespace by name and checks that nothing happens there while the policies
// keep working elsewhere. It leaves onMultipleMatches=oldest configured for the next scenario.
func testNamespaceRestrictions(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	excluded := newNamespace(t, "e2e-excluded")
	allowed := newNamespace(t, "e2e-allowed")
	upgrade(t, map[string]any{
		"namespaces":       map[string]any{"exclude": []any{"kube-system", "kube-public", "kube-node-lease", excluded}},
		"serviceDiscovery": map[string]any{"onMultipleMatches": "oldest"},
	})
	waitOldestInEffect(t, allowed)

	name := ccmName(t)
	createService(t, excluded, name, relayLabels())
	vi := createVirtualIngress(t, virtualIngress(excluded, "coder", virtualingress.CoderSpec(relayLabels())))
	if _, found, _ := unstructured.NestedMap(vi.Object, "status"); found {
		t.Fatalf("VirtualIngress in an excluded namespace got a status: %v", vi.Object["status"])
	}
	// A Service event there must not resolve it either; a later write in an allowed namespace resolving shows the
	// policies did run meanwhile.
	createService(t, excluded, ccmName(t), relayLabels())
	probe := ccmName(t)
	createService(t, allowed, probe, relayLabels())
	createVirtualIngress(t, virtualIngress(allowed, "coder", virtualingress.CoderSpec(relayLabels())))
	waitIngressServices(t, allowed, virtualingress.GeneratedName("coder"), probe)
	if _, found, _ := unstructured.NestedMap(getVirtualIngress(t, excluded, "coder").Object, "status"); found {
		t.Fatal("VirtualIngress in an excluded namespace got a status")
	}
	assertNoIngress(t, excluded, virtualingress.GeneratedName("coder"))
}

// waitOldestInEffect proves that the upgraded resolve policy is the one Kyverno applies: a VirtualIngress with two
// matching Services resolves to the older one. It touches the probe on every poll because Kyverno may still have
// admitted the first write with the previous policy.
func waitOldestInEffect(t *testing.T, ns string) {
	t.Helper()
	labels := map[string]string{"app": "oldest-probe"}
	createService(t, ns, "probe-old", labels)
	time.Sleep(1100 * time.Millisecond) // creationTimestamp has one-second resolution; the two must differ.
	createService(t, ns, "probe-new", labels)
	createVirtualIngress(t, virtualIngress(ns, "probe", virtualingress.CoderSpec(labels)))
	touches := 0
	eventually(t, "resolve policy with onMultipleMatches=oldest in effect", func() (bool, string, error) {
		vi, err := env.dyn.Resource(virtualIngressGVR).Namespace(ns).Get(context.Background(), "probe", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		b := virtualingress.Backends(vi)["spec.rules[0].http.paths[0].backend"]
		if b.Service == "probe-old" && b.State == v1alpha1.BackendResolved {
			return true, "", nil
		}
		touches++
		vi.SetAnnotations(map[string]string{"e2e/touch": fmt.Sprint(touches)})
		_, err = env.dyn.Resource(virtualIngressGVR).Namespace(ns).Update(context.Background(), vi, metav1.UpdateOptions{})
		return false, fmt.Sprint(b), err
	})
	waitIngressServices(t, ns, virtualingress.GeneratedName("probe"), "probe-old")
}

func testMultipleMatchesOldest(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-oldest")
	labels := map[string]string{"app": "web"}
	createService(t, ns, "web-green", labels)
	time.Sleep(1100 * time.Millisecond) // distinct creationTimestamps (one-second resolution)
	createService(t, ns, "web-aqua", labels)
	createVirtualIngress(t, virtualIngress(ns, "web", virtualingress.CoderSpec(labels)))
	waitIngressServices(t, ns, virtualingress.GeneratedName("web"), "web-green")
	// The write may be resolved from Kyverno's informer before it saw web-aqua: web-green all the same, but as the only
	// match. The status controller finds the missing candidate and has the VirtualIngress resolved again.
	eventually(t, "Ready, and a message saying why web-green was chosen", func() (bool, string, error) {
		vi, err := env.dyn.Resource(virtualIngressGVR).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		s, r, _ := virtualingress.Condition(vi, "Ready")
		msg := virtualingress.Backends(vi)["spec.rules[0].http.paths[0].backend"].Message
		return s == "True" && r == "IngressUpToDate" && strings.Contains(msg, "oldest of 2"), fmt.Sprintf("%s/%s, %q", s, r, msg), nil
	})
}

// testUpgradesAndUninstall changes every value the README calls upgrade-safe, one upgrade at a time. Each upgrade
// must be accepted (Kyverno validates policy updates in its webhook, so a rejected policy fails the upgrade) and must
// not delete or replace any generated Ingress. Then it uninstalls and checks what the README promises stays.
func testUpgradesAndUninstall(t *testing.T) {
	dumpKyvernoLogsOnFailure(t)
	ns := newNamespace(t, "e2e-upgrade")
	resolvedCoder(t, ns)

	defaultAnnotations := []any{
		"kubectl.kubernetes.io/last-applied-configuration", "argocd.argoproj.io/tracking-id",
		"argocd.argoproj.io/sync-options", "argocd.argoproj.io/compare-options", "argocd.argoproj.io/sync-wave",
		"argocd.argoproj.io/hook", "meta.helm.sh/release-name", "meta.helm.sh/release-namespace", "helm.sh/resource-policy",
	}
	steps := []struct {
		name   string
		values map[string]any
		check  func(t *testing.T)
	}{
		{"excludedAnnotations", map[string]any{"generatedIngress": map[string]any{
			"excludedAnnotations": append(append([]any{}, defaultAnnotations...), "cert-manager.io/cluster-issuer"),
		}}, func(t *testing.T) {
			// A change of the generate rule's data re-syncs every Ingress: Kyverno regenerates it, or (a GeneratingPolicy
			// whose background controller started before the CRDs) the status controller's repair makes it.
			eventually(t, "cert-manager annotation dropped from the Ingress", func() (bool, string, error) {
				ing, err := getIngress(ns, virtualingress.GeneratedName("coder"))
				if err != nil {
					return false, "", err
				}
				_, has := ing.Annotations["cert-manager.io/cluster-issuer"]
				return !has, fmt.Sprint(ing.Annotations), nil
			})
		}},
		{"excludedLabels", map[string]any{"generatedIngress": map[string]any{"excludedLabels": []any{}}}, func(t *testing.T) {
			eventually(t, "instance label copied once no longer excluded", func() (bool, string, error) {
				ing, err := getIngress(ns, virtualingress.GeneratedName("coder"))
				if err != nil {
					return false, "", err
				}
				return ing.Labels["app.kubernetes.io/instance"] == "tenant-ingresses", fmt.Sprint(ing.Labels), nil
			})
		}},
		{"onMultipleMatches", map[string]any{"serviceDiscovery": map[string]any{"onMultipleMatches": "error"}}, nil},
		{"namespaces", map[string]any{"namespaces": map[string]any{
			"include":  []any{ns, "tenant-root"},
			"exclude":  []any{"kube-system"},
			"selector": map[string]any{"matchExpressions": []any{map[string]any{"key": "virtual-ingress.io/disabled", "operator": "DoesNotExist"}}},
		}}, nil},
		{"policy settings", map[string]any{"policy": map[string]any{
			"failurePolicy": "Ignore", "webhookTimeoutSeconds": int64(5), "orphanIngressesOnUninstall": false,
		}}, nil},
		{"commonLabels", map[string]any{"commonLabels": map[string]any{"team": "platform"}}, nil},
		{"back to defaults", nil, func(t *testing.T) {
			eventually(t, "cert-manager annotation back on the Ingress", func() (bool, string, error) {
				ing, err := getIngress(ns, virtualingress.GeneratedName("coder"))
				if err != nil {
					return false, "", err
				}
				return ing.Annotations["cert-manager.io/cluster-issuer"] == "letsencrypt-prod", fmt.Sprint(ing.Annotations), nil
			})
		}},
	}
	for _, s := range steps {
		before := generatedIngressUIDs(t)
		upgrade(t, s.values)
		if s.check != nil {
			s.check(t)
		}
		assertIngressesKept(t, "upgrade "+s.name, before)
	}

	before := generatedIngressUIDs(t)
	if err := env.helm.Uninstall(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "policies removed", func() (bool, string, error) {
		names := chartPolicies(t)
		return len(names) == 0, fmt.Sprint(names), nil
	})
	// Kyverno deletes a generate policy's downstreams asynchronously; give it the chance to (wrongly) do so by
	// waiting until its background controller has processed the policy deletion: no UpdateRequest left.
	waitUpdateRequestsDrained(t)
	getVirtualIngress(t, ns, "coder")
	assertIngressesKept(t, "helm uninstall", before)
}

func upgrade(t *testing.T, values map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	values = withEngine(values)
	if err := env.helm.Upgrade(ctx, values); err != nil {
		t.Fatalf("helm upgrade %v: %v", values, err)
	}
	if err := env.cluster.WaitPoliciesReady(ctx, policyengine.PolicySelector); err != nil {
		t.Fatal(err)
	}
	startStatusController(t)
}

// generatedIngressUIDs maps namespace/name to UID for every Ingress the policies generated, cluster-wide.
func generatedIngressUIDs(t *testing.T) map[string]string {
	t.Helper()
	list, err := env.kube.NetworkingV1().Ingresses("").List(context.Background(), metav1.ListOptions{LabelSelector: "virtual-ingress.io/virtualingress"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, ing := range list.Items {
		out[ing.Namespace+"/"+ing.Name] = string(ing.UID)
	}
	return out
}

// assertIngressesKept checks that every Ingress of before still exists with the same UID. Namespaces that earlier
// scenarios left behind are skipped once they terminate: their deletion is the garbage collector's, not ours.
func assertIngressesKept(t *testing.T, what string, before map[string]string) {
	t.Helper()
	after := generatedIngressUIDs(t)
	for key, uid := range before {
		ns := strings.SplitN(key, "/", 2)[0]
		namespace, err := env.kube.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
		if err != nil || namespace.DeletionTimestamp != nil {
			continue
		}
		if after[key] != uid {
			t.Fatalf("%s deleted or replaced Ingress %s (UID %s, now %q)", what, key, uid, after[key])
		}
	}
}

// pendingRequestFor tells whether Kyverno holds an unprocessed generate request for the VirtualIngress ns/name.
func pendingRequestFor(ns, name string) (bool, error) {
	urs, err := devcluster.PendingUpdateRequests(context.Background(), env.dyn)
	if err != nil {
		return false, err
	}
	for i := range urs {
		if controller.GeneratesFor(&urs[i], "VirtualIngress", ns, name) {
			return true, nil
		}
	}
	return false, nil
}

func waitUpdateRequestsDrained(t *testing.T) {
	t.Helper()
	eventually(t, "Kyverno UpdateRequests processed", func() (bool, string, error) {
		urs, err := devcluster.PendingUpdateRequests(context.Background(), env.dyn)
		if err != nil {
			return false, "", err
		}
		var pending []string
		for _, ur := range urs {
			state, _, _ := unstructured.NestedString(ur.Object, "status", "state")
			pending = append(pending, ur.GetName()+"="+state)
		}
		sort.Strings(pending)
		return len(pending) == 0, strings.Join(pending, ","), nil
	})
}
