// Package filesync keeps a directory equal to one ConfigMap's data, a file per key, as the CoreDNS and HAProxy Pods'
// sidecar: the kubelet updates a ConfigMap volume only at its next sync of the Pod (a minute or more), while a watch
// delivers the change at once, so a new external IP reaches both servers within a second.
package filesync

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// Write makes dir hold exactly data: each key a file, replaced by rename so that a reader never sees half a file;
// files of keys no longer present are removed. Files whose content is unchanged are not touched.
func Write(dir string, data map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for key, content := range data {
		if key == "" || strings.ContainsAny(key, "/\x00") || strings.HasPrefix(key, ".") {
			return fmt.Errorf("filesync: key %q is no file name", key)
		}
		path := filepath.Join(dir, key)
		if old, err := os.ReadFile(path); err == nil && string(old) == content {
			continue
		}
		tmp, err := os.CreateTemp(dir, ".tmp-"+key+"-")
		if err != nil {
			return err
		}
		_, werr := tmp.WriteString(content)
		cerr := tmp.Close()
		if err := firstError(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
			_ = os.Remove(tmp.Name())
			return err
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			_ = os.Remove(tmp.Name())
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, keep := data[e.Name()]; !keep && e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Once writes the ConfigMap's data into dir and returns; a ConfigMap that does not exist yet is waited for.
func Once(ctx context.Context, kube kubernetes.Interface, key types.NamespacedName, dir string) error {
	return watchConfigMap(ctx, kube, key, func(cm *corev1.ConfigMap) (bool, error) {
		return true, Write(dir, cm.Data)
	})
}

// Run keeps dir equal to the ConfigMap's data until ctx ends. A deleted ConfigMap leaves the files as they were:
// the servers keep serving the last configuration until the operator writes it again.
func Run(ctx context.Context, kube kubernetes.Interface, key types.NamespacedName, dir string, logf func(string, ...any)) error {
	var last map[string]string
	err := watchConfigMap(ctx, kube, key, func(cm *corev1.ConfigMap) (bool, error) {
		if maps.Equal(cm.Data, last) {
			return false, nil
		}
		if err := Write(dir, cm.Data); err != nil {
			// A write that fails (a full volume, say) is retried at the next change; the old files stay.
			logf("writing ConfigMap %s into %s: %v", key, dir, err)
			return false, nil
		}
		last = maps.Clone(cm.Data)
		logf("ConfigMap %s resourceVersion %s written into %s (%d files)", key, cm.ResourceVersion, dir, len(cm.Data))
		return false, nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// watchConfigMap calls f with the ConfigMap's every state until f says done or ctx ends; the watch is restarted
// when it breaks. Listing and watching name the one object, which is all the Pod's Role allows.
func watchConfigMap(ctx context.Context, kube kubernetes.Interface, key types.NamespacedName, f func(*corev1.ConfigMap) (bool, error)) error {
	lw := cache.NewListWatchFromClient(kube.CoreV1().RESTClient(), "configmaps", key.Namespace, fields.OneTermEqualSelector("metadata.name", key.Name))
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.ConfigMap{}, nil, func(ev watch.Event) (bool, error) {
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if !ok || ev.Type == watch.Deleted {
			return false, nil
		}
		return f(cm)
	})
	return err
}
