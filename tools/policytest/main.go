// Command policytest checks the chart and its Kyverno policies without a cluster: golden renders, the policies/
// copy of the chart's policies, `kyverno test` suites run in-process, and an offline preview of what the policies
// make of a user's VirtualIngresses.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
)

// errReported marks a failure whose details were already printed; main only sets the exit code for it.
var errReported = errors.New("failed")

func main() {
	// Kyverno logs through controller-runtime's logger; unset, it prints a stack trace after 30s. Its messages
	// are not results, so drop them.
	crlog.SetLogger(logr.Discard())
	root := newRootCommand()
	root.SetArgs(goStyleFlags(root, os.Args[1:]))
	if err := root.Execute(); err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "policytest:", err)
		}
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "policytest",
		Short:         "Offline checks of the virtual-ingress chart and its Kyverno policies",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newGoldenCommand(), newSyncCommand(), newKyvernoCommand(), newPreviewCommand())
	return root
}
