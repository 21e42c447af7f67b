package main

import (
	"context"
	"fmt"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/devcluster"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// The floor is what Kyverno itself costs for the scale run's job: a generate ClusterPolicy without context (no
// lookup, no status, no Service events) on a kind of its own, creating one Ingress per trigger. Each engine's
// scale figures are reported as a ratio to it, measured in the same run on the same cluster.
const (
	floorGroup    = "bench.virtual-ingress.io"
	floorResource = "floortriggers"
	floorPolicy   = "bench-floor"
	floorLabel    = "bench.virtual-ingress.io/floor=true"
)

var (
	floorGVR         = schema.GroupVersionResource{Group: floorGroup, Version: "v1alpha1", Resource: floorResource}
	clusterPolicyGVR = schema.GroupVersionResource{Group: "kyverno.io", Version: "v1", Resource: "clusterpolicies"}
)

// floorResult is the floor's scale run: n triggers over n existing Services in one namespace.
type floorResult struct {
	// Sized: the triggers carry a VirtualIngress's spec and status (see floorTrigger).
	Sized bool `json:"sized,omitempty"`
	// TriggerBytes is a trigger's mean size as the API server lists it.
	TriggerBytes    int     `json:"triggerBytes"`
	Triggers        int     `json:"triggers"`
	CreateSeconds   float64 `json:"createAllSeconds"`
	ConvergeSeconds float64 `json:"convergeSeconds"`
	Generated       int     `json:"generated"`
	// SkippedByThreshold counts the UpdateRequests Kyverno dropped (updateRequestThreshold), FailedToCreate those it
	// gave up creating: their Ingresses never come, and ConvergeSeconds is when the last of the others came. Such a
	// floor did less than the whole job, so its time is a lower bound of Kyverno's cost and a ratio to it an upper
	// bound.
	SkippedByThreshold int `json:"updateRequestsSkippedByThreshold"`
	FailedToCreate     int `json:"updateRequestsFailedToCreate"`
	// GaveUp counts the floor's UpdateRequests Kyverno left Failed after its retries; GaveUpMessage is one's message.
	GaveUp        int    `json:"updateRequestsFailedForGood"`
	GaveUpMessage string `json:"updateRequestFailure,omitempty"`
	// KyvernoRestarts counts the restarts of Kyverno's controllers during the run (see supervisor).
	KyvernoRestarts map[string]int `json:"kyvernoRestarts,omitempty"`
	// Usage is what the control plane spent from the first create until Kyverno was done.
	Usage *usage `json:"usage,omitempty"`
	Error string `json:"error,omitempty"`
	// Restart is the floor of the restart rows (see restartFloor), measured after the rest when the bench's restart
	// run is on; RestartError says why it is missing.
	Restart      *restartResult `json:"backgroundControllerRestart,omitempty"`
	RestartError string         `json:"backgroundControllerRestartError,omitempty"`
}

// floor measures the floor (or the sized floor) with progress on stdout.
func (b *bench) floor(ctx context.Context, n int, sized bool) (*floorResult, error) {
	name := (&floorResult{Sized: sized}).name()
	what := "one context-free generate rule"
	if sized {
		what += ", triggers the size of a VirtualIngress"
	}
	fmt.Printf("[%s] %d triggers over %d Services in one namespace, %s\n", name, n, n, what)
	start := time.Now()
	r, err := b.measureFloor(ctx, n, sized)
	if r != nil {
		fmt.Printf("[%s] %d of %d Ingresses in %.1f s (triggers of %d bytes)\n", name, r.Generated, r.Triggers, r.ConvergeSeconds, r.TriggerBytes)
	}
	if err != nil {
		return r, fmt.Errorf("%s: %w", name, err)
	}
	fmt.Printf("[%s] converged in %.1f s (run and clean-up %.0f s)\n", name, r.ConvergeSeconds, time.Since(start).Seconds())
	return r, nil
}

func (f *floorResult) name() string {
	if f.Sized {
		return "sized floor"
	}
	return "floor"
}

// ratio is seconds over the floor's time, and whether that is an upper bound (the floor did less than the whole
// job); 0 without a complete measurement of the floor.
func (f *floorResult) ratio(seconds float64) (float64, bool) {
	if f == nil || f.Error != "" || f.ConvergeSeconds == 0 {
		return 0, false
	}
	return seconds / f.ConvergeSeconds, f.Generated < f.Triggers
}

// measureFloor installs the floor's CRD, RBAC and policy, restarts Kyverno (its background controller learns kinds
// at start), runs the same creation pattern as scaleRun, and removes all of it again. A sized floor's triggers carry
// a VirtualIngress's content (see floorTrigger).
func (b *bench) measureFloor(ctx context.Context, n int, sized bool) (*floorResult, error) {
	var status map[string]any
	if sized {
		var err error
		if status, err = resolvedStatus(); err != nil {
			return nil, err
		}
	}
	var r *floorResult
	err := b.withFloorPolicy(ctx, func() (err error) {
		r, err = b.floorRun(ctx, n, status)
		return err
	})
	return r, err
}

// withFloorPolicy runs measure with the floor's policy installed (installFloor) and nothing else of Kyverno's, then
// removes the policy and what measure created (cleanUp), so that the next measurement starts from a clean cluster.
// An error of measure is returned as is, without cleaning up.
func (b *bench) withFloorPolicy(ctx context.Context, measure func() error) error {
	b.engine, b.namespaces = "floor", nil
	if err := b.installFloor(ctx); err != nil {
		return err
	}
	if err := measure(); err != nil {
		return err
	}
	if err := b.dyn.Resource(clusterPolicyGVR).Delete(ctx, floorPolicy, metav1.DeleteOptions{}); err != nil {
		return err
	}
	return b.cleanUp(ctx)
}

func (b *bench) floorRun(ctx context.Context, n int, status map[string]any) (*floorResult, error) {
	ns, err := b.scaleNamespace(ctx, n)
	if err != nil {
		return nil, err
	}
	iw, err := b.watchIngresses(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer iw.stop()
	skippedBefore, failedBefore := b.skippedByThreshold(), b.failedToCreate()
	before, err := b.usageSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := parallel(n, func(i int) error {
		_, err := b.dyn.Resource(floorGVR).Namespace(ns).Create(ctx, floorTrigger(ns, i, status), metav1.CreateOptions{})
		return err
	}); err != nil {
		return nil, err
	}
	created := time.Since(start)
	// Nothing repairs what Kyverno drops here: once it has nothing left to do, the Ingresses that are missing never
	// come.
	settled, counted := make(chan struct{}), make(chan struct{})
	var gaveUp floorRequests
	go func() {
		defer close(settled)
		gaveUp = b.waitFloorSettled(ctx, counted)
	}()
	seen, _ := iw.countResolved(n, func(i int) string { return fmt.Sprintf("svc-%d", i) }, b.timeout, settled)
	if seen < n {
		// The watch may have ended under the load (the API server drops watchers that fall behind): wait for Kyverno
		// anyway, and count from a list below.
		select {
		case <-settled:
		case <-time.After(time.Until(start.Add(created + b.timeout))):
		}
	}
	close(counted)
	<-settled
	// Includes the wait for Kyverno to give up on failed requests, when there were any: their retries are its cost.
	after, err := b.usageSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	generated, last, err := b.floorIngresses(ctx, ns, n)
	if err != nil {
		return nil, err
	}
	triggerBytes, err := b.meanBytes(ctx, floorGVR, ns)
	if err != nil {
		return nil, err
	}
	if last.Before(start) {
		last = start
	}
	r := &floorResult{
		Sized: status != nil, TriggerBytes: triggerBytes,
		Triggers: n, CreateSeconds: created.Seconds(), ConvergeSeconds: last.Sub(start).Seconds(), Generated: generated,
		SkippedByThreshold: b.skippedByThreshold() - skippedBefore, FailedToCreate: b.failedToCreate() - failedBefore,
		GaveUp: gaveUp.count, GaveUpMessage: gaveUp.message, KyvernoRestarts: b.kyverno.take(), Usage: after.since(before, n),
	}
	// A floor missing Ingresses that Kyverno did not say it dropped is no floor: its time would be that of a smaller
	// job of unknown size.
	if missing := n - generated - r.SkippedByThreshold - r.FailedToCreate - r.GaveUp; missing > 0 {
		r.Error = fmt.Sprintf("%d of %d Ingresses never came within %s (UpdateRequests dropped by the threshold %d, failed to create %d, failed for good %d; Kyverno restarts: %v)",
			missing, n, b.timeout, r.SkippedByThreshold, r.FailedToCreate, r.GaveUp, r.KyvernoRestarts)
	}
	if status == nil && r.Error == "" && b.floorRestart {
		if r.Restart, err = b.restartFloor(ctx, ns, n); err != nil {
			r.RestartError = err.Error()
		}
	}
	return r, nil
}

// floorIngresses counts the floor's Ingresses that route to their Service, from a list, and returns when the last of
// them was created. A floor Ingress is created once, already right, so its creationTimestamp (whole seconds) is when
// it came; unlike a watch, a list cannot miss one.
func (b *bench) floorIngresses(ctx context.Context, ns string, n int) (int, time.Time, error) {
	list, err := b.kube.NetworkingV1().Ingresses(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, time.Time{}, err
	}
	generated, last := 0, time.Time{}
	for i := range list.Items {
		ing := &list.Items[i]
		var idx int
		if _, err := fmt.Sscanf(ing.Name, "vi-%d"+virtualingress.NameSuffix, &idx); err != nil || idx >= n || firstService(ing) != fmt.Sprintf("svc-%d", idx) {
			continue
		}
		generated++
		if t := ing.CreationTimestamp.Time; t.After(last) {
			last = t
		}
	}
	return generated, last, nil
}

// floorRequests are the floor's UpdateRequests that Kyverno failed for good, and the message of one of them.
type floorRequests struct {
	count   int
	message string
}

// waitFloorSettled returns once Kyverno has nothing left to do for the floor, or stop is closed: no UpdateRequest of
// the floor's policy pending, and the failed ones unchanged for floorGiveUp. Kyverno turns a Failed request back to
// Pending and retries it, up to ten times with a back-off of seconds, then leaves it Failed.
func (b *bench) waitFloorSettled(ctx context.Context, stop <-chan struct{}) floorRequests {
	const floorGiveUp = 30 * time.Second
	var failed floorRequests
	var failedSince time.Time
	for {
		// Kyverno labels a generate request with its policy's name; the selector keeps the API server from sending
		// any other request (each carries its admission payload) while it is being measured.
		list, err := b.dyn.Resource(devcluster.UpdateRequestGVR).Namespace(devcluster.KyvernoNamespace).List(ctx,
			metav1.ListOptions{LabelSelector: "generate.kyverno.io/policy-name=" + floorPolicy})
		if err == nil {
			pending, now := 0, floorRequests{}
			for _, ur := range list.Items {
				switch state, _, _ := unstructured.NestedString(ur.Object, "status", "state"); state {
				case "Completed", "Skip":
				case "Failed":
					now.count++
					now.message, _, _ = unstructured.NestedString(ur.Object, "status", "message")
				default:
					pending++
				}
			}
			if now.count != failed.count {
				failed, failedSince = now, time.Now()
			}
			if pending == 0 && (failed.count == 0 || time.Since(failedSince) >= floorGiveUp) {
				return failed
			}
		}
		select {
		case <-stop:
			return failed
		case <-time.After(2 * time.Second):
		}
	}
}

func (b *bench) installFloor(ctx context.Context) error {
	cfg := b.cluster.RESTConfig()
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, floorCRD(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, setupTimeout, true, func(ctx context.Context) (bool, error) {
		crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, floorCRD().Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("floor CRD not established: %w", err)
	}
	if err := b.floorRBAC(ctx); err != nil {
		return err
	}
	if err := b.kyverno.restart(ctx); err != nil {
		return err
	}
	// Kyverno's admission controller validates the policy; on a loaded machine it may still be (re)starting.
	var last error
	err = wait.PollUntilContextTimeout(ctx, time.Second, setupTimeout, true, func(ctx context.Context) (bool, error) {
		_, last = b.dyn.Resource(clusterPolicyGVR).Create(ctx, floorClusterPolicy(), metav1.CreateOptions{})
		return last == nil || apierrors.IsAlreadyExists(last), nil
	})
	if err != nil {
		return fmt.Errorf("floor policy: %w (last error: %w)", err, last)
	}
	readyCtx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	return b.cluster.WaitPoliciesReady(readyCtx, floorLabel)
}

// floorRBAC grants Kyverno's controllers what the floor policy needs, as the chart does for its own policies.
func (b *bench) floorRBAC(ctx context.Context) error {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: floorPolicy},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{floorGroup}, Resources: []string{floorResource}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
		},
	}
	if _, err := b.kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: floorPolicy},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: floorPolicy},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.ServiceAccountKind, Namespace: "kyverno", Name: "kyverno-admission-controller"},
			{Kind: rbacv1.ServiceAccountKind, Namespace: "kyverno", Name: "kyverno-background-controller"},
		},
	}
	if _, err := b.kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func floorCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: floorResource + "." + floorGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: floorGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: floorResource, Singular: "floortrigger", Kind: "FloorTrigger", ListKind: "FloorTriggerList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}

// floorClusterPolicy generates, per trigger, the Ingress the scale run's VirtualIngresses resolve to (same spec:
// class, host, TLS, path and port; same name), with the Service named by the trigger: no context, no status, no
// Service events. Like the chart's policies by default (policy.reports), it asks Kyverno for no policy reports, so
// that the ratio to it measures the design and not that setting.
func floorClusterPolicy() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kyverno.io/v1",
		"kind":       "ClusterPolicy",
		"metadata": map[string]any{"name": floorPolicy, "labels": map[string]any{
			"bench.virtual-ingress.io/floor": "true",
			"reports.kyverno.io/disabled":    "true",
		}},
		"spec": map[string]any{
			"admission":  true,
			"background": false,
			"rules": []any{map[string]any{
				"name":  "generate-ingress",
				"match": map[string]any{"any": []any{map[string]any{"resources": map[string]any{"kinds": []any{floorGroup + "/v1alpha1/FloorTrigger"}}}}},
				"generate": map[string]any{
					"apiVersion":  "networking.k8s.io/v1",
					"kind":        "Ingress",
					"name":        "{{ request.object.metadata.name }}" + virtualingress.NameSuffix,
					"namespace":   "{{ request.namespace }}",
					"synchronize": true,
					"data":        map[string]any{"spec": virtualingress.CoderIngressSpec("{{ request.object.spec.service }}")},
				},
			}},
		},
	}}
}
