//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// takeoverKind is one source kind and what it generates, for the takeover scenarios.
type takeoverKind struct {
	source, generated       string
	sourceGVR, generatedGVR schema.GroupVersionResource
	newSource               func(ns, name string, labels map[string]string) *unstructured.Unstructured
	// theirs is another team's object of the generated kind.
	theirs func(ns, name string) *unstructured.Unstructured
	// routesTo reports whether the generated object name routes to the Service (and what it routes to).
	routesTo func(ns, name, service string) (bool, string, error)
}

var (
	ingressTakeover = takeoverKind{
		source: "VirtualIngress", generated: "Ingress",
		sourceGVR:    virtualIngressGVR,
		routesTo:     ingressRoutesTo,
		generatedGVR: schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
		newSource: func(ns, name string, labels map[string]string) *unstructured.Unstructured {
			return virtualIngress(ns, name, virtualingress.CoderSpec(labels))
		},
		theirs: func(ns, name string) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
				"metadata": map[string]any{"name": name, "namespace": ns},
				"spec": map[string]any{"rules": []any{virtualingress.Rule("theirs.example.com",
					virtualingress.Path("/", virtualingress.NamedBackend("real-shop", 443)))}},
			}}
		},
	}
	routeTakeover = takeoverKind{
		source: "VirtualHTTPRoute", generated: "HTTPRoute",
		sourceGVR: virtualingress.RouteGVR, generatedGVR: virtualingress.HTTPRouteGVR,
		routesTo: httpRouteRoutesTo,
		newSource: func(ns, name string, labels map[string]string) *unstructured.Unstructured {
			return virtualingress.NewRoute(ns, name, virtualingress.CoderRouteSpec(labels))
		},
		theirs: func(ns, name string) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
				"metadata": map[string]any{"name": name, "namespace": ns},
				"spec": map[string]any{
					"parentRefs": []any{map[string]any{"name": "theirs"}},
					"rules":      []any{map[string]any{"backendRefs": []any{map[string]any{"name": "real-shop", "port": int64(443)}}}},
				},
			}}
		},
	}
)

// testNoTakeoverWhileUnresolved: the source is written while no Service matches, so nothing holds its generated name
// and the name check on its write passes; another team then creates an object of that name, and a matching Service
// appears. The other team's object must stay exactly as it was, through the source's deletion too, and the source
// says ...NameTaken.
func testNoTakeoverWhileUnresolved(k takeoverKind) func(*testing.T) {
	return func(t *testing.T) {
		dumpKyvernoLogsOnFailure(t)
		ns := newNamespace(t, "e2e-takeover")
		labels := map[string]string{"app": "later"}
		createSource(t, k, k.newSource(ns, "hold", labels))
		waitCondition(t, k, ns, "hold", "Resolved", "False", "")
		theirs := createTheirs(t, k, ns)
		createService(t, ns, ccmName(t), labels)
		assertNoTakeover(t, k, ns, theirs)
	}
}

// testNoTakeoverBeforeGeneration: the source resolves at once, but Kyverno's background controller has not generated
// yet (it is stopped) when another team creates an object of the generated name.
func testNoTakeoverBeforeGeneration(k takeoverKind) func(*testing.T) {
	return func(t *testing.T) {
		dumpKyvernoLogsOnFailure(t)
		ns := newNamespace(t, "e2e-takeover")
		labels := map[string]string{"app": "now"}
		createService(t, ns, ccmName(t), labels)
		// Admission resolves from Kyverno's global context of Services, which sees a new Service a moment later (a
		// source created before that stays unresolved until the next Service event). A probe source resolving at its
		// creation proves the Service is there, so that "hold" resolves at once as this case needs.
		probes := 0
		eventually(t, "Kyverno's global context has the Service", func() (bool, string, error) {
			probes++
			name := fmt.Sprintf("probe-%d", probes)
			createSource(t, k, k.newSource(ns, name, labels))
			time.Sleep(time.Second)
			src, err := env.dyn.Resource(k.sourceGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			s, r, m := virtualingress.Condition(src, "Resolved")
			return s == "True", name + ": " + s + " " + r + ": " + m, nil
		})
		startBackground := stopBackgroundController(t)
		createSource(t, k, k.newSource(ns, "hold", labels))
		waitCondition(t, k, ns, "hold", "Resolved", "True", "")
		theirs := createTheirs(t, k, ns)
		startBackground()
		assertNoTakeover(t, k, ns, theirs)
	}
}

func createSource(t *testing.T, k takeoverKind, src *unstructured.Unstructured) {
	t.Helper()
	if _, err := env.dyn.Resource(k.sourceGVR).Namespace(src.GetNamespace()).Create(context.Background(), src, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s %s/%s: %v", src.GetKind(), src.GetNamespace(), src.GetName(), err)
	}
}

func createTheirs(t *testing.T, k takeoverKind, ns string) *unstructured.Unstructured {
	t.Helper()
	theirs, err := env.dyn.Resource(k.generatedGVR).Namespace(ns).Create(context.Background(), k.theirs(ns, virtualingress.GeneratedName("hold")), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("another team creating %s %s: %v", k.generated, virtualingress.GeneratedName("hold"), err)
	}
	return theirs
}

// waitCondition waits until the source's condition has this status (and reason, unless empty).
func waitCondition(t *testing.T, k takeoverKind, ns, name, conditionType, status, reason string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s %s/%s %s=%s %s", k.source, ns, name, conditionType, status, reason), func() (bool, string, error) {
		src, err := env.dyn.Resource(k.sourceGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		s, r, m := virtualingress.Condition(src, conditionType)
		return s == status && (reason == "" || r == reason), s + " " + r + ": " + m, nil
	})
}

// assertNoTakeover waits for the source to report the name taken, then checks that the other team's object was never
// written, and that deleting the source leaves it in place.
func assertNoTakeover(t *testing.T, k takeoverKind, ns string, theirs *unstructured.Unstructured) {
	t.Helper()
	waitCondition(t, k, ns, "hold", "Ready", "False", k.generated+"NameTaken")
	unchanged := func(when string) {
		t.Helper()
		now, err := env.dyn.Resource(k.generatedGVR).Namespace(ns).Get(context.Background(), theirs.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: the other team's %s: %v", when, k.generated, err)
		}
		if now.GetResourceVersion() != theirs.GetResourceVersion() || len(now.GetOwnerReferences()) != 0 {
			t.Fatalf("%s: the other team's %s changed: resourceVersion %s -> %s, owners %v", when, k.generated,
				theirs.GetResourceVersion(), now.GetResourceVersion(), now.GetOwnerReferences())
		}
	}
	unchanged("once the name is reported taken")
	if err := env.dyn.Resource(k.sourceGVR).Namespace(ns).Delete(context.Background(), "hold", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, k.source+" hold deleted", func() (bool, string, error) {
		_, err := env.dyn.Resource(k.sourceGVR).Namespace(ns).Get(context.Background(), "hold", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
	// Garbage collection and Kyverno's clean-up of a deleted trigger act within a second or two.
	time.Sleep(3 * time.Second)
	unchanged("after the " + k.source + " was deleted")
}
