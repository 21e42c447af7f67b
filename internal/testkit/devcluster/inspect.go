package devcluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// PID returns the process id of a running component, or 0. The benchmark reads a controller's peak memory from it.
func (c *Cluster) PID(component string) int {
	p := c.process(component)
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil || p.exitedLocked() {
		return 0
	}
	return p.cmd.Process.Pid
}

// policyKinds are the Kyverno policy kinds a chart of this repository may render, with how each reports readiness.
var policyKinds = []struct {
	resource schema.GroupVersionResource
	ready    func(*unstructured.Unstructured) bool
}{
	{clusterPolicyResource, func(u *unstructured.Unstructured) bool { return conditionTrue(u, "Ready") }},
	{schema.GroupVersionResource{Group: "policies.kyverno.io", Version: "v1", Resource: "mutatingpolicies"}, celPolicyReady},
	{schema.GroupVersionResource{Group: "policies.kyverno.io", Version: "v1", Resource: "generatingpolicies"}, celPolicyReady},
	{schema.GroupVersionResource{Group: "policies.kyverno.io", Version: "v1", Resource: "validatingpolicies"}, celPolicyReady},
}

// celPolicyReady reads the CEL policies' summary: ready once compiled, its webhooks configured and its RBAC checked.
func celPolicyReady(u *unstructured.Unstructured) bool {
	ready, _, _ := unstructured.NestedBool(u.Object, "status", "conditionStatus", "ready")
	return ready
}

// Policies lists the Kyverno policies of every kind (ClusterPolicy and the CEL kinds of policyKinds) matching the
// label selector, as resource/name.
func (c *Cluster) Policies(ctx context.Context, selector string) ([]string, error) {
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return nil, err
	}
	all, _, err := listPolicies(ctx, dyn, selector)
	return all, err
}

// listPolicies lists the policies of every kind in policyKinds matching selector, as resource/name, and those of
// them Kyverno does not report ready.
func listPolicies(ctx context.Context, dyn dynamic.Interface, selector string) (all, notReady []string, err error) {
	for _, kind := range policyKinds {
		list, err := dyn.Resource(kind.resource).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return nil, nil, err
		}
		for i := range list.Items {
			name := kind.resource.Resource + "/" + list.Items[i].GetName()
			all = append(all, name)
			if !kind.ready(&list.Items[i]) {
				notReady = append(notReady, name)
			}
		}
	}
	return all, notReady, nil
}

// WaitPoliciesReady waits until at least one Kyverno policy (of a kind in policyKinds)
// matches the label selector and Kyverno reports every matching one ready (accepted, and its webhooks configured).
func (c *Cluster) WaitPoliciesReady(ctx context.Context, selector string) error {
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, c.opts.Timeout, true, func(ctx context.Context) (bool, error) {
		all, notReady, err := listPolicies(ctx, dyn, selector)
		if err != nil {
			return false, err
		}
		last = fmt.Sprintf("%d policies, not ready: %s", len(all), strings.Join(notReady, ", "))
		return len(all) > 0 && len(notReady) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("devcluster: Kyverno policies %q not ready: %w (%s)", selector, err, last)
	}
	return nil
}

// UpdateRequestGVR is Kyverno's UpdateRequest: what its admission controller queues for the background controller.
var UpdateRequestGVR = schema.GroupVersionResource{Group: "kyverno.io", Version: "v2", Resource: "updaterequests"}

// PendingUpdateRequests returns the UpdateRequests Kyverno's background controller has not finished with: those in
// none of the states it stops processing (Completed, Failed, Skip).
func PendingUpdateRequests(ctx context.Context, dyn dynamic.Interface) ([]unstructured.Unstructured, error) {
	list, err := dyn.Resource(UpdateRequestGVR).Namespace(KyvernoNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var pending []unstructured.Unstructured
	for _, ur := range list.Items {
		switch state, _, _ := unstructured.NestedString(ur.Object, "status", "state"); state {
		case "Completed", "Failed", "Skip":
		default:
			pending = append(pending, ur)
		}
	}
	return pending, nil
}

// CountInLog is how many times text occurs in component's log so far.
func (c *Cluster) CountInLog(component, text string) (int, error) {
	data, err := os.ReadFile(c.LogPath(component))
	return strings.Count(string(data), text), err
}

// SetKyvernoUpdateRequestThreshold sets updateRequestThreshold in Kyverno's ConfigMap, which its controllers watch
// (they apply a change within a few seconds): 0 makes Kyverno skip every update request, as under a flood.
func (c *Cluster) SetKyvernoUpdateRequestThreshold(ctx context.Context, value string) error {
	patch := fmt.Sprintf(`{"data":{"updateRequestThreshold":%q}}`, value)
	_, err := c.kube.CoreV1().ConfigMaps(KyvernoNamespace).Patch(ctx, "kyverno", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}
