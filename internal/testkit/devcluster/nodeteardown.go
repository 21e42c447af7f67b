package devcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/netns"
)

// drainTimeout bounds the wait for the kubelet to stop every Pod (each Pod's grace period is cut to drainGrace).
const (
	drainTimeout = 90 * time.Second
	drainGrace   = int64(2)
)

// drainNode stops what would replace Pods (the controller manager, the scheduler), then deletes every Pod through
// the API and waits until the kubelet has stopped them all: that is how the CNI plugin is asked to release each
// Pod's address, veth and rules. stop stops one component by name.
func drainNode(kube kubernetes.Interface, stop func(component string) error) error {
	var errs []error
	for _, name := range []string{ComponentControllerManager, ComponentScheduler} {
		errs = append(errs, stop(name))
	}
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	grace := drainGrace
	for {
		pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("listing Pods to stop: %w", err))...)
		}
		if len(pods.Items) == 0 {
			return errors.Join(errs...)
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			err := kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
		select {
		case <-ctx.Done():
			return errors.Join(append(errs, fmt.Errorf("%d Pods still on the node after %s", len(pods.Items), drainTimeout))...)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// drainNodeFromDir is drainNode for a cluster started by another process, found through its data directory.
func drainNodeFromDir(dir string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "admin.kubeconfig"))
	if err != nil {
		return nil // the control plane never came up: there are no Pods to stop
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return drainNode(kube, func(name string) error {
		if _, err := os.Stat(pidPath(dir, name)); err != nil {
			return nil
		}
		return stopPidFile(pidPath(dir, name), dir)
	})
}

// cleanupNode runs after every component has stopped: it kills what is left in the node's cgroup (containerd's
// shims, containers of Pods that were not deleted, the holder of the node's namespaces), which ends the namespaces
// and with them the node's link, routes, rules and mounts, and removes the cgroup. Nothing outside the node's own
// namespaces, cgroup and data directory is touched; ns is nil when another process started the node.
func cleanupNode(ns *netns.Namespace) error {
	errs := []error{stopNodeProcesses()}
	if ns != nil {
		ns.Close()
	}
	errs = append(errs, waitLinkGone(), removeNodeCgroups())
	return errors.Join(errs...)
}
