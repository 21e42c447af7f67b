// Command pause is the sandbox ("pause") container of the local cluster's node: no registry is reachable, so
// internal/testkit/devcluster builds this into an image with tools/images. Like Kubernetes' own, it holds the Pod's
// namespaces, reaps the orphans it inherits as PID 1 of a shared PID namespace, and exits on SIGINT or SIGTERM.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
