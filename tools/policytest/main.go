// Command policytest checks the chart and its Kyverno policies without a cluster: golden renders, the policies/
// copy of the chart's policies, `kyverno test` suites run in-process, and an offline preview of what the policies
// make of a user's VirtualIngresses and VirtualHTTPRoutes. Each verb's code is in internal/<verb>; this file only
// wires them into one command.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/cmdline"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/compare"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/convert"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/golden"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/kyverno"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/preview"
	"github.com/virtual-ingress/virtual-ingress/tools/policytest/internal/results"
)

func main() {
	cmdline.SilenceKyvernoLogs()
	root := newRootCommand()
	root.SetArgs(cmdline.GoStyleFlags(root, os.Args[1:]))
	if err := root.Execute(); err != nil {
		if !errors.Is(err, results.ErrReported) {
			fmt.Fprintln(os.Stderr, "policytest:", err)
		}
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	return cmdline.NewRoot(golden.NewCommand(), golden.NewSyncCommand(), kyverno.NewCommand(), preview.NewCommand(), compare.NewCommand(), convert.NewCommand())
}
