package filesync

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/types"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
)

// Options are the flags of `apps-ingress-operator sync-files`, the CoreDNS and HAProxy Pods' sidecar (and, with
// Once, their init container).
type Options struct {
	Namespace, ConfigMap string
	Shards               int
	Dir                  string
	Once                 bool
}

// BindFlags registers the sidecar's flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the ConfigMap's namespace (default: $POD_NAMESPACE)")
	fs.StringVar(&o.ConfigMap, "config-map", "", "the main ConfigMap; its data and its shards' (<name>-<i>) become the files (required)")
	fs.IntVar(&o.Shards, "shards", 0, "how many shard ConfigMaps <name>-0 … <name>-<shards-1> the operator writes beside the main one")
	fs.StringVar(&o.Dir, "dir", "", "the directory the files are written into (required)")
	fs.BoolVar(&o.Once, "once", false, "write the files once (waiting for the ConfigMap to exist) and exit")
}

// Validate fails when a required flag is missing.
func (o Options) Validate() error {
	if o.Namespace == "" || o.ConfigMap == "" || o.Dir == "" {
		return fmt.Errorf("sync-files: --namespace (or $POD_NAMESPACE), --config-map and --dir are required")
	}
	return nil
}

// Keys are the ConfigMaps whose data become the files: the main one and its shards.
func (o Options) Keys() []types.NamespacedName {
	keys := []types.NamespacedName{{Namespace: o.Namespace, Name: o.ConfigMap}}
	for i := range o.Shards {
		keys = append(keys, types.NamespacedName{Namespace: o.Namespace, Name: routes.ShardName(o.ConfigMap, i)})
	}
	return keys
}
