package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/virtual-ingress/virtual-ingress/internal/devcluster"
)

// The chart's policy engines (value policy.engine), in the order `make bench` runs them.
const (
	engineClusterPolicy    = "clusterPolicy"
	engineGeneratingPolicy = "generatingPolicy"
)

var knownEngines = []string{engineClusterPolicy, engineGeneratingPolicy}

// setupTimeout bounds the waits around the measurements (policies ready, clean-up), which --timeout does not.
const setupTimeout = 5 * time.Minute

// chartSelector selects every policy the chart renders, whatever the engine.
const chartSelector = "app.kubernetes.io/part-of=virtual-ingress"

var (
	clusterPolicyGVR    = schema.GroupVersionResource{Group: "kyverno.io", Version: "v1", Resource: "clusterpolicies"}
	mutatingPolicyGVR   = schema.GroupVersionResource{Group: "policies.kyverno.io", Version: "v1", Resource: "mutatingpolicies"}
	generatingPolicyGVR = schema.GroupVersionResource{Group: "policies.kyverno.io", Version: "v1", Resource: "generatingpolicies"}
)

// parseEngines splits the --engines flag, rejecting unknown and repeated names.
func parseEngines(s string) ([]string, error) {
	var engines []string
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !slices.Contains(knownEngines, e) {
			return nil, fmt.Errorf("unknown engine %q (want %s)", e, strings.Join(knownEngines, ", "))
		}
		if slices.Contains(engines, e) {
			return nil, fmt.Errorf("engine %q given twice", e)
		}
		engines = append(engines, e)
	}
	if len(engines) == 0 {
		return nil, fmt.Errorf("no engine in %q", s)
	}
	return engines, nil
}

// engineKinds are the policy kinds the chart renders for each engine (the names are the same in both).
var engineKinds = map[string][]schema.GroupVersionResource{
	engineClusterPolicy:    {clusterPolicyGVR},
	engineGeneratingPolicy: {mutatingPolicyGVR, generatingPolicyGVR},
}

// policyReady is Kyverno's readiness of one policy: the Ready condition of a ClusterPolicy, status.conditionStatus.ready
// of the CEL kinds (compiled, webhooks configured, RBAC granted).
func policyReady(p *unstructured.Unstructured) (bool, string) {
	if p.GetKind() == "ClusterPolicy" {
		conds, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Ready" {
				msg, _ := m["message"].(string)
				return m["status"] == "True", msg
			}
		}
		return false, "no Ready condition"
	}
	ready, _, _ := unstructured.NestedBool(p.Object, "status", "conditionStatus", "ready")
	msg, _, _ := unstructured.NestedString(p.Object, "status", "conditionStatus", "message")
	return ready, msg
}

// waitPoliciesReady waits until each policy kind of engine has at least one policy of the chart and Kyverno reports
// every one ready. (devcluster's wait knows only ClusterPolicies.)
func (b *bench) waitPoliciesReady(ctx context.Context, engine string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, setupTimeout, true, func(ctx context.Context) (bool, error) {
		var all, notReady []string
		missing := false
		for _, gvr := range engineKinds[engine] {
			list, err := b.dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: chartSelector})
			if err != nil {
				return false, err
			}
			missing = missing || len(list.Items) == 0
			for i := range list.Items {
				name := gvr.Resource + "/" + list.Items[i].GetName()
				all = append(all, name)
				if ready, msg := policyReady(&list.Items[i]); !ready {
					notReady = append(notReady, fmt.Sprintf("%s (%s)", name, msg))
				}
			}
		}
		last = fmt.Sprintf("policies %s; not ready: %s", strings.Join(all, ", "), strings.Join(notReady, ", "))
		return !missing && len(notReady) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%s policies not ready: %w (%s)", engine, err, last)
	}
	return nil
}

// cleanUp leaves the cluster as the next engine needs it after `helm uninstall`: no policy of the chart left (of
// either engine), the namespaces this engine's measurements created deleted (their VirtualIngresses, Services and
// the Ingresses the uninstall orphaned with them), no UpdateRequest pending, and fresh Kyverno controllers, so that
// the next engine's peak memory and caches start from zero.
func (b *bench) cleanUp(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, setupTimeout, true, func(ctx context.Context) (bool, error) {
		for _, gvr := range []schema.GroupVersionResource{clusterPolicyGVR, mutatingPolicyGVR, generatingPolicyGVR} {
			list, err := b.dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: chartSelector})
			if err != nil || len(list.Items) > 0 {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("policies still present after helm uninstall: %w", err)
	}
	// The policies are gone, so deleting Services no longer makes Kyverno touch VirtualIngresses.
	for _, ns := range b.namespaces {
		if err := b.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, setupTimeout, true, func(ctx context.Context) (bool, error) {
		for _, ns := range b.namespaces {
			if _, err := b.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("namespaces %s not deleted: %w", strings.Join(b.namespaces, ", "), err)
	}
	b.namespaces = nil
	if err := b.waitUpdateRequestsDrained(ctx); err != nil {
		return err
	}
	for _, c := range []string{devcluster.ComponentKyverno, devcluster.ComponentKyvernoBackground} {
		if err := b.cluster.StopComponent(c); err != nil {
			return fmt.Errorf("stopping %s: %w", c, err)
		}
		if err := b.cluster.StartComponent(ctx, c); err != nil {
			return fmt.Errorf("restarting %s: %w", c, err)
		}
	}
	return nil
}
