// Command policytest checks the chart and its Kyverno policies without a cluster: golden renders, the policies/
// copy of the chart's policies, `kyverno test` suites run in-process, and an offline preview of what the policies
// make of a user's VirtualIngresses and VirtualHTTPRoutes.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
)

// errReported marks a failure whose details were already printed; main only sets the exit code for it.
var errReported = errors.New("failed")

func main() {
	silenceKyvernoLogs()
	root := newRootCommand()
	root.SetArgs(goStyleFlags(root, os.Args[1:]))
	if err := root.Execute(); err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "policytest:", err)
		}
		os.Exit(1)
	}
}

// silenceKyvernoLogs drops what Kyverno's libraries log. Kyverno logs through controller-runtime's logger; unset, it
// prints a stack trace after 30s. The CEL engines' type converter also logs through klog, on every MutatingPolicy
// evaluation, that no OpenAPI schema is known for the VirtualIngress kind (the CLI has none offline either; it
// matters only for ApplyConfiguration patches, which the admission policies do not use). None of it is a result.
func silenceKyvernoLogs() {
	crlog.SetLogger(logr.Discard())
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	klog.SetLogger(logr.Discard())
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "policytest",
		Short:         "Offline checks of the virtual-ingress chart and its Kyverno policies",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newGoldenCommand(), newSyncCommand(), newKyvernoCommand(), newPreviewCommand(), newCompareCommand(), newConvertCommand())
	return root
}
