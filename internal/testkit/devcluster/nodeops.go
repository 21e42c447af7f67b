package devcluster

import (
	"archive/tar"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// apiserverKubeletUser is the API server's identity towards the kubelet (logs, exec, port-forward).
const apiserverKubeletUser = "kube-apiserver-kubelet-client"

// applyNodeRBAC grants what the bootstrap policy does not: cluster DNS's reads, and the API server's kubelet API
// access (kubeadm binds the same role to its kubelet client).
func (c *Cluster) applyNodeRBAC(ctx context.Context) error {
	rbac := c.kube.RbacV1()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "devcluster:coredns"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"services", "pods", "namespaces", "endpoints"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
		},
	}
	bindings := []*rbacv1.ClusterRoleBinding{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "devcluster:coredns"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: userDNS}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "devcluster:apiserver-kubelet"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:kubelet-api-admin"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: apiserverKubeletUser}},
		},
	}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, b := range bindings {
		if _, err := rbac.ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// buildLocalImages builds the node's own images from tools/devcluster (no registry is reachable) with tools/images,
// and imports them: the sandbox ("pause") image, and the echo workload tests use.
func (c *Cluster) buildLocalImages(ctx context.Context) error {
	for _, img := range []struct{ pkg, ref string }{
		{"./tools/devcluster/pause", pauseImage},
		{"./tools/devcluster/echo", EchoImage},
	} {
		if err := c.BuildImage(ctx, img.pkg, img.ref); err != nil {
			return err
		}
	}
	return nil
}

// BuildImage builds Go main package pkg of this repository into an image with tools/images (for this machine's
// architecture) and imports it as ref (name:version).
func (c *Cluster) BuildImage(ctx context.Context, pkg, ref string) error {
	if c.node == nil {
		return errors.New("devcluster: BuildImage needs a cluster started WithNode")
	}
	name, version, ok := strings.Cut(ref, ":")
	if !ok {
		return fmt.Errorf("devcluster: image %q has no tag", ref)
	}
	layout := filepath.Join(c.node.paths.images, filepath.Base(name))
	cmd := exec.CommandContext(ctx, "go", "run", "./tools/images", "--package", pkg, "--name", filepath.Base(name),
		"--out", layout, "--platforms", "linux/"+runtime.GOARCH, "--version", version)
	cmd.Dir = c.opts.RepoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building image %s: %w: %s", ref, err, out)
	}
	return c.ImportImage(ctx, layout, name)
}

// ImportImage imports an OCI image layout (as tools/images and `make images` write them) into the node's
// containerd as name:<the layout's version>, for Pods whose pull policy never pulls.
func (c *Cluster) ImportImage(ctx context.Context, layout, name string) error {
	if c.node == nil {
		return errors.New("devcluster: ImportImage needs a cluster started WithNode")
	}
	archive, err := os.CreateTemp(c.node.paths.images, "import-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(archive.Name())
	defer archive.Close()
	if err := tarDir(archive, layout); err != nil {
		return fmt.Errorf("archiving %s: %w", layout, err)
	}
	if _, err := archive.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if out, err := c.ctr(ctx, archive, "images", "import", "--base-name", name, "--platform", "linux/"+runtime.GOARCH, "-"); err != nil {
		return fmt.Errorf("ctr images import %s: %w: %s", name, err, out)
	}
	return nil
}

func tarDir(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		hdr.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// localStorageClass is the node's default StorageClass: PersistentVolumes the cluster creates up front on the
// node's disk, so that a chart's PVC binds unchanged.
const localStorageClass = "devcluster-local"

func (c *Cluster) createLocalVolumes(ctx context.Context) error {
	immediate := storagev1.VolumeBindingImmediate
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        localStorageClass,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: &immediate,
	}
	if _, err := c.kube.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		return err
	}
	hostPathType := corev1.HostPathDirectory
	for i := range 8 {
		dir := filepath.Join(c.node.paths.volumes, fmt.Sprintf("pv%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		// Any Pod user may write, as on a freshly formatted volume with fsGroup applied.
		if err := os.Chmod(dir, 0o1777); err != nil {
			return err
		}
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("devcluster-pv%d", i)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              localStorageClass,
				PersistentVolumeSource: corev1.PersistentVolumeSource{
					HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: &hostPathType},
				},
			},
		}
		if _, err := c.kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// probeHealthz asks a component's /healthz at host:port; the components serve it with self-signed certificates.
func probeHealthz(ctx context.Context, host string, port int, https bool) (bool, error) {
	scheme := "http"
	if https {
		scheme = "https"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s://%s/healthz", scheme, net.JoinHostPort(host, strconv.Itoa(port))), nil)
	if err != nil {
		return false, err
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a health probe of a self-signed component on this machine
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("/healthz: %s: %s", resp.Status, body)
	}
	return true, nil
}

// TrustRegistry makes the node's containerd pull from host (host:port) as hostsTOML says (the registry's URL and CA):
// it is written to the node's own certs.d/<host>/hosts.toml, which containerd reads at each pull. Nothing on the
// host, and no other client, trusts the registry by it.
func (c *Cluster) TrustRegistry(host, hostsTOML string) error {
	if c.node == nil {
		return errors.New("devcluster: TrustRegistry needs a cluster started WithNode")
	}
	dir := filepath.Join(c.node.paths.registryHosts, host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(hostsTOML), 0o600)
}
