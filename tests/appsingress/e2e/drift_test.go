//go:build e2e

package e2e_test

import (
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/controller"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
)

// TestRenderedConfigMapsAreRepaired: the rendered ConfigMaps are the operator's; a main one and a shard deleted and one
// edited by someone else are written back as rendered, without any AppsIngress changing.
func TestRenderedConfigMapsAreRepaired(t *testing.T) {
	ctx := context.Background()
	configMaps := mgmtKube.CoreV1().ConfigMaps(operatorNS)
	// The operator writes both once it leads and its cache has synced.
	data := func(name string) map[string]string {
		var cm *corev1.ConfigMap
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			var err error
			cm, err = configMaps.Get(ctx, name, metav1.GetOptions{})
			return err == nil, nil
		})
		if err != nil {
			t.Fatalf("ConfigMap %s never written: %v", name, err)
		}
		return cm.Data
	}
	shard := routes.ShardName(dnsMapName, 1)
	dnsBefore, proxyBefore, shardBefore := data(dnsMapName), data(proxyMapName), data(shard)

	for _, name := range []string{dnsMapName, shard} {
		if err := configMaps.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	edited := maps.Clone(proxyBefore)
	// A comment: HAProxy accepts it, so the copy into the running proxy stays valid meanwhile.
	edited[controller.HAProxyKey] += "\n# edited by hand\n"
	if _, err := configMaps.Update(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: proxyMapName, Namespace: operatorNS, ResourceVersion: resourceVersion(t, proxyMapName)},
		Data:       edited,
	}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	for name, want := range map[string]map[string]string{dnsMapName: dnsBefore, proxyMapName: proxyBefore, shard: shardBefore} {
		var got map[string]string
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			cm, err := configMaps.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			got = cm.Data
			return maps.Equal(got, want), nil
		})
		if err != nil {
			t.Fatalf("ConfigMap %s not written back as rendered within 30s: %d keys, want %d", name, len(got), len(want))
		}
	}
	noSyncErrors(t)
}

func resourceVersion(t *testing.T, name string) string {
	t.Helper()
	cm, err := mgmtKube.CoreV1().ConfigMaps(operatorNS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm.ResourceVersion
}
