// Package cmdline is what every verb of policytest shares on the command line: the root command the verbs hang
// from, the Go-style long flags it accepts, and quiet Kyverno libraries. main wires the verbs into it; a verb's
// tests run the verb through it as main does.
package cmdline

import (
	"io"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
)

// NewRoot is the policytest command with the verbs under it.
func NewRoot(verbs ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:           "policytest",
		Short:         "Offline checks of the virtual-ingress chart and its Kyverno policies",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(verbs...)
	return root
}

// SilenceKyvernoLogs drops what Kyverno's libraries log. Kyverno logs through controller-runtime's logger; unset, it
// prints a stack trace after 30s. The CEL engines' type converter also logs through klog, on every MutatingPolicy
// evaluation, that no OpenAPI schema is known for the VirtualIngress kind (the CLI has none offline either; it
// matters only for ApplyConfiguration patches, which the admission policies do not use). None of it is a result.
func SilenceKyvernoLogs() {
	crlog.SetLogger(logr.Discard())
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	klog.SetLogger(logr.Discard())
}
