package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/filesync"
)

// syncFiles is `apps-ingress-operator sync-files`: the CoreDNS and HAProxy Pods' sidecar (and, with --once, their
// init container) that writes the rendered ConfigMaps (the main one and its shards) into the directory the server
// reads.
func syncFiles(args []string) error {
	var o filesync.Options
	fs := flag.NewFlagSet("sync-files", flag.ExitOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
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
	if o.Once {
		return filesync.Once(ctx, kube, o.Keys(), o.Dir)
	}
	return filesync.Run(ctx, kube, o.Keys(), o.Dir, func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "sync-files: "+format+"\n", a...)
	})
}
