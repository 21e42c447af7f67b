package devcluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// WaitClusterPoliciesReady waits until at least one ClusterPolicy matches the label selector and Kyverno reports
// every matching one Ready (accepted, and its webhooks configured).
func (c *Cluster) WaitClusterPoliciesReady(ctx context.Context, selector string) error {
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, c.opts.Timeout, true, func(ctx context.Context) (bool, error) {
		list, err := dyn.Resource(clusterPolicyResource).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		var notReady []string
		for i := range list.Items {
			if !conditionTrue(&list.Items[i], "Ready") {
				notReady = append(notReady, list.Items[i].GetName())
			}
		}
		last = fmt.Sprintf("%d policies, not ready: %s", len(list.Items), strings.Join(notReady, ", "))
		return len(list.Items) > 0 && len(notReady) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("devcluster: ClusterPolicies %q not ready: %w (%s)", selector, err, last)
	}
	return nil
}
