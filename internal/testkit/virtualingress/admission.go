package virtualingress

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// WaitAdmissionReady waits until a VirtualIngress write passes through the chart's whole admission chain: Kyverno's
// resolve policy (which fails until Kyverno has loaded the chart's GlobalContextEntry of Services, of which Kyverno
// reports no status) and then the chart's ValidatingAdmissionPolicies (which the API server loads asynchronously after
// they are created). A server-side dry run of a VirtualIngress with a denied annotation is refused by the latter only
// once the former has let it through.
func WaitAdmissionReady(ctx context.Context, dyn dynamic.Interface, timeout time.Duration) error {
	probe := New("default", "admission-probe", CoderSpec(map[string]string{"virtual-ingress.io/probe": "true"}))
	probe.SetAnnotations(map[string]string{"nginx.ingress.kubernetes.io/server-snippet": "probe"})
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, last = dyn.Resource(GVR).Namespace("default").Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return last != nil && strings.Contains(last.Error(), "is not allowed on a VirtualIngress"), nil
	})
	if err != nil {
		return fmt.Errorf("the chart's admission chain is not in force: %w; last answer: %w", err, last)
	}
	return nil
}
