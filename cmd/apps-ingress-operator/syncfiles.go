package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/filesync"
	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
)

// syncFiles is `apps-ingress-operator sync-files`: the CoreDNS and HAProxy Pods' sidecar (and, with --once, their
// init container) that writes the rendered ConfigMaps (the main one and its shards) into the directory the server
// reads.
func syncFiles(args []string) error {
	fs := flag.NewFlagSet("sync-files", flag.ExitOnError)
	namespace := fs.String("namespace", os.Getenv("POD_NAMESPACE"), "the ConfigMap's namespace (default: $POD_NAMESPACE)")
	name := fs.String("config-map", "", "the main ConfigMap; its data and its shards' (<name>-<i>) become the files (required)")
	shards := fs.Int("shards", 0, "how many shard ConfigMaps <name>-0 … <name>-<shards-1> the operator writes beside the main one")
	dir := fs.String("dir", "", "the directory the files are written into (required)")
	once := fs.Bool("once", false, "write the files once (waiting for the ConfigMap to exist) and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *namespace == "" || *name == "" || *dir == "" {
		return fmt.Errorf("sync-files: --namespace (or $POD_NAMESPACE), --config-map and --dir are required")
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	cfg.UserAgent = "apps-ingress-operator-sync-files"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	keys := []types.NamespacedName{{Namespace: *namespace, Name: *name}}
	for i := range *shards {
		keys = append(keys, types.NamespacedName{Namespace: *namespace, Name: routes.ShardName(*name, i)})
	}
	if *once {
		return filesync.Once(ctx, kube, keys, *dir)
	}
	return filesync.Run(ctx, kube, keys, *dir, func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "sync-files: "+format+"\n", a...)
	})
}
