// Package policies tests the chart's rendered Kyverno policies through Kyverno's engine where `kyverno test` cannot:
// Kyverno's offline cluster cannot list VirtualIngresses (it guesses their plural as "virtualingresss"), so the
// mutate-existing rule that reacts to Service events is exercised here with internal/testkit/kyvernosim.
package policies
