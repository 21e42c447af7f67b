package devcluster

import (
	"context"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (c *Cluster) controllerManagerProcess() *process {
	// Controllers for nodes, volumes and pod networking have nothing to act on without a node; with one, the node
	// lifecycle controller removes the kubelet's not-ready taint and the volume controllers bind PVCs. Node IPAM
	// stays off: the CNI configuration holds the Pods' range.
	controllers := "--controllers=*,-nodeipam,-nodelifecycle,-attachdetach,-persistentvolume-binder"
	if c.opts.WithNode {
		controllers = "--controllers=*,-nodeipam"
	}
	return &process{
		name:    ComponentControllerManager,
		bin:     c.bins[binControllerManager.file],
		dataDir: c.dir,
		args: []string{
			"--kubeconfig=" + filepath.Join(c.dir, "kube-controller-manager.kubeconfig"),
			"--service-account-private-key-file=" + c.pki.saKey,
			"--root-ca-file=" + c.pki.caCert,
			// Each controller acts as its own ServiceAccount, as in kubeadm clusters, so RBAC problems of e.g.
			// the garbage collector show up here as they would in production.
			"--use-service-account-credentials=true",
			"--secure-port=0",
			"--leader-elect=false",
			controllers,
			"--profiling=false",
		},
	}
}

// controllerManagerReady waits for the ServiceAccount controller to have created default/default: proof
// that the controller manager is connected, authorized and running its controllers.
func (c *Cluster) controllerManagerReady(ctx context.Context) (bool, error) {
	_, err := c.kube.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// controllerManagerRestarted is readiness after StartComponent, when default/default exists from before:
// a namespace created now must get its ServiceAccount from the new process.
func (c *Cluster) controllerManagerRestarted(ctx context.Context) (bool, error) {
	const probe = "devcluster-controller-manager-probe"
	ns, err := c.kube.CoreV1().Namespaces().Get(ctx, probe, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		ns, err = c.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probe}}, metav1.CreateOptions{})
	}
	if err != nil {
		return false, err
	}
	if ns.DeletionTimestamp != nil {
		// Left terminating by an earlier probe; the namespace controller finishing it also proves the point.
		return false, nil
	}
	if _, err := c.kube.CoreV1().ServiceAccounts(probe).Get(ctx, "default", metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, c.kube.CoreV1().Namespaces().Delete(ctx, probe, metav1.DeleteOptions{})
}
