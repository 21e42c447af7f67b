//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

var ingressGVR = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}

// dumpNamespaceOnFailure logs, when the test fails, what a failed wait cannot say, one short line per object (CI keeps
// only .ci/failure-summary's lines): each source's resourceVersion, conditions and the digest of the spec its status
// renders; each generated object's digest and last writers; Kyverno's UpdateRequests for the namespace. A source's
// status digest equal to its generated object's means the object holds it.
func dumpNamespaceOnFailure(t *testing.T, ns string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx := context.Background()
		t.Logf("namespace %s at %s:", ns, time.Now().UTC().Format("15:04:05.000"))
		for _, gvr := range []schema.GroupVersionResource{virtualIngressGVR, virtualingress.RouteGVR} {
			eachObject(ctx, t, gvr, ns, func(u *unstructured.Unstructured) string {
				rendered := ""
				for _, field := range []string{"ingress", "route"} {
					if spec, ok, _ := unstructured.NestedMap(u.Object, "status", field, "spec"); ok {
						rendered = fmt.Sprintf("status.%s.spec %s", field, digest(spec))
					}
				}
				return fmt.Sprintf("%s; %s", conditions(u), rendered)
			})
		}
		for _, gvr := range []schema.GroupVersionResource{ingressGVR, virtualingress.HTTPRouteGVR} {
			eachObject(ctx, t, gvr, ns, func(u *unstructured.Unstructured) string {
				spec, _, _ := unstructured.NestedMap(u.Object, "spec")
				return fmt.Sprintf("spec %s; written by %s", digest(spec), writers(u.GetManagedFields()))
			})
		}
		urs, err := env.dyn.Resource(devcluster.UpdateRequestGVR).Namespace(devcluster.KyvernoNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Logf("UpdateRequests: %v", err)
			return
		}
		for _, ur := range urs.Items {
			spec, _ := json.Marshal(withoutContext(ur.Object["spec"]))
			if !strings.Contains(string(spec), `"namespace":"`+ns+`"`) {
				continue
			}
			state, _, _ := unstructured.NestedString(ur.Object, "status", "state")
			retries, _, _ := unstructured.NestedInt64(ur.Object, "status", "retryCount")
			message, _, _ := unstructured.NestedString(ur.Object, "status", "message")
			t.Logf("UpdateRequest %s created %s: %s, %d retries, %q; %s", ur.GetName(),
				ur.GetCreationTimestamp().UTC().Format("15:04:05"), state, retries, message, spec)
		}
	})
}

func eachObject(ctx context.Context, t *testing.T, gvr schema.GroupVersionResource, ns string, describe func(*unstructured.Unstructured) string) {
	list, err := env.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("%s: %v", gvr.Resource, err)
		return
	}
	for i := range list.Items {
		u := &list.Items[i]
		t.Logf("%s %s rv=%s: %s", gvr.Resource, u.GetName(), u.GetResourceVersion(), describe(u))
	}
}

// conditions lists type=status/reason of each status condition, and the Ready condition's message.
func conditions(u *unstructured.Unstructured) string {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []string
	for _, c := range list {
		m, _ := c.(map[string]any)
		s := fmt.Sprintf("%v=%v/%v", m["type"], m["status"], m["reason"])
		if m["type"] == "Ready" {
			s += fmt.Sprintf(" %q", m["message"])
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// digest is a short hash of v's JSON (maps marshal with sorted keys).
func digest(v any) string {
	data, _ := json.Marshal(v)
	h := fnv.New32a()
	_, _ = h.Write(data)
	return fmt.Sprintf("#%08x", h.Sum32())
}

// writers names each field manager with the time of its last write.
func writers(fields []metav1.ManagedFieldsEntry) string {
	var out []string
	for _, f := range fields {
		at := ""
		if f.Time != nil {
			at = f.Time.UTC().Format("15:04:05")
		}
		out = append(out, fmt.Sprintf("%s/%s@%s", f.Manager, f.Operation, at))
	}
	return strings.Join(out, ",")
}

// withoutContext drops an UpdateRequest's admission context (the whole object, twice): what is left names the request.
func withoutContext(spec any) any {
	m, ok := spec.(map[string]any)
	if !ok {
		return spec
	}
	out := map[string]any{}
	for k, v := range m {
		if k != "context" {
			out[k] = v
		}
	}
	return out
}
