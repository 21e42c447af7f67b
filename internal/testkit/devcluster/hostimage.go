package devcluster

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// HostImage is an image made of programs installed on this machine (Debian's HAProxy, a CoreDNS built from its
// module), for charts whose default images are upstream's and cannot be pulled here. Each program comes with the
// shared libraries ldd lists, so a dynamically linked one runs as it does on the host.
type HostImage struct {
	// Ref is the image's name as the chart's values give it, e.g. docker.io/library/haproxy:2.6.
	Ref string
	// Files maps a path in the image to a file on the host.
	Files map[string]string
	// Links maps a path in the image to the target of a symbolic link (busybox's applets, say).
	Links map[string]string
	// BindsLowPorts lists files of the image that get the cap_net_bind_service=+ep file capability, as upstream's
	// CoreDNS image gives its binary so that a non-root container allowed NET_BIND_SERVICE can listen on port 53.
	BindsLowPorts []string
	// Entrypoint, User (uid:gid) and Env of the image's configuration.
	Entrypoint []string
	User       string
	Env        []string
}

// BuildHostImage builds img and imports it into the node's containerd.
func (c *Cluster) BuildHostImage(ctx context.Context, img HostImage) error {
	if c.node == nil {
		return errors.New("devcluster: BuildHostImage needs a cluster started WithNode")
	}
	files := map[string]string{}
	for dst, src := range img.Files {
		files[dst] = src
		libs, err := sharedLibraries(src)
		if err != nil {
			return err
		}
		for _, l := range libs {
			files[l] = l
		}
	}
	layer, err := hostLayer(files, img.Links, img.BindsLowPorts)
	if err != nil {
		return err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layer)), nil })
	if err != nil {
		return err
	}
	image, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return err
	}
	cf, err := image.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config = v1.Config{Entrypoint: img.Entrypoint, User: img.User, Env: append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, img.Env...)}
	if image, err = mutate.ConfigFile(image, cf); err != nil {
		return err
	}
	tag, err := name.NewTag(img.Ref)
	if err != nil {
		return err
	}
	archive := filepath.Join(c.node.paths.images, strings.NewReplacer("/", "_", ":", "_").Replace(img.Ref)+".tar")
	if err := tarball.WriteToFile(archive, tag, image); err != nil {
		return err
	}
	defer os.Remove(archive)
	if out, err := c.ctr(ctx, nil, "images", "import", archive); err != nil {
		return fmt.Errorf("ctr images import %s: %w: %s", img.Ref, err, out)
	}
	return nil
}

var lddPath = regexp.MustCompile(`(/\S+) \(0x`)

// sharedLibraries lists what the dynamic loader maps for a program (nothing for a static one).
func sharedLibraries(program string) ([]string, error) {
	out, err := exec.Command("ldd", program).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "not a dynamic executable") {
			return nil, nil
		}
		return nil, fmt.Errorf("ldd %s: %w: %s", program, err, out)
	}
	var libs []string
	for _, m := range lddPath.FindAllStringSubmatch(string(out), -1) {
		libs = append(libs, m[1])
	}
	return libs, nil
}

// hostLayer is a tar of files (image path to host path), symbolic links, the directories above them, and the
// passwd and group entries of the non-root user the charts run as.
func hostLayer(files, links map[string]string, bindsLowPorts []string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{"etc": true, "tmp": true}
	entries := map[string]bool{}
	for p := range files {
		entries[p] = true
	}
	for p := range links {
		entries[p] = true
	}
	for p := range entries {
		for d := path.Dir(strings.TrimPrefix(p, "/")); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	sorted := func(m map[string]bool) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	for _, d := range sorted(dirs) {
		mode := int64(0o755)
		if d == "tmp" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: mode}); err != nil {
			return nil, err
		}
	}
	generated := map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
		"etc/group":  "root:x:0:\nnonroot:x:65532:\n",
	}
	for _, p := range []string{"etc/group", "etc/passwd"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: 0o644, Size: int64(len(generated[p]))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(generated[p])); err != nil {
			return nil, err
		}
	}
	for _, p := range sorted(entries) {
		name := strings.TrimPrefix(p, "/")
		if target, ok := links[p]; ok {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}); err != nil {
				return nil, err
			}
			continue
		}
		data, err := os.ReadFile(files[p])
		if err != nil {
			return nil, err
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(data))}
		if slices.Contains(bindsLowPorts, p) {
			hdr.PAXRecords = map[string]string{"SCHILY.xattr.security.capability": string(netBindServiceCap())}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// netBindServiceCap is the security.capability xattr of `setcap cap_net_bind_service=+ep`: revision 2 with the
// effective flag, CAP_NET_BIND_SERVICE (10) permitted, nothing inheritable.
func netBindServiceCap() []byte {
	b := make([]byte, 20)
	binary.LittleEndian.PutUint32(b[0:], 0x02000000|0x1)
	binary.LittleEndian.PutUint32(b[4:], 1<<10)
	return b
}
