package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/repo"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/virtualingress"
)

// Kyverno's background controller reads the trigger of every UpdateRequest by listing all objects of its kind in its
// namespace (to match the UID), so at scale what it spends grows with the size of those objects. The sized floor
// shows how much: its triggers carry what a VirtualIngress does, the spec the scale run writes and the status the
// resolve policy gives it (the policy tester's expected output for the coder example, generated from the chart).

// expectedStatus is the resolve policy's status for the coder VirtualIngress.
const expectedStatus = "policies/virtual-ingress/expected/resolve/coder.yaml"

func resolvedStatus() (map[string]any, error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, expectedStatus))
	if err != nil {
		return nil, err
	}
	var vi map[string]any
	if err := yaml.Unmarshal(data, &vi); err != nil {
		return nil, fmt.Errorf("%s: %w", expectedStatus, err)
	}
	status, ok := vi["status"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s has no status", expectedStatus)
	}
	return status, nil
}

// floorTrigger is the floor's i-th trigger in ns; with a status (the sized floor), it carries a VirtualIngress's
// content too: the scale run's spec and that status (the floor's kind has no status subresource, so it is stored as
// written).
func floorTrigger(ns string, i int, status map[string]any) *unstructured.Unstructured {
	spec := map[string]any{"service": fmt.Sprintf("svc-%d", i)}
	trigger := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": floorGroup + "/v1alpha1",
		"kind":       "FloorTrigger",
		"metadata":   map[string]any{"name": fmt.Sprintf("vi-%d", i), "namespace": ns},
		"spec":       spec,
	}}
	if status != nil {
		for k, v := range virtualingress.CoderSpec(labelsFor(i)) {
			spec[k] = v
		}
		trigger.Object["status"] = status
	}
	return trigger
}

// meanBytes is the mean size of the objects of gvr in ns as the API server lists them (JSON): what each of Kyverno's
// trigger lists costs per object.
func (b *bench) meanBytes(ctx context.Context, gvr schema.GroupVersionResource, ns string) (int, error) {
	list, err := b.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	if len(list.Items) == 0 {
		return 0, nil
	}
	total := 0
	for _, item := range list.Items {
		data, err := json.Marshal(item.Object)
		if err != nil {
			return 0, err
		}
		total += len(data)
	}
	return total / len(list.Items), nil
}
