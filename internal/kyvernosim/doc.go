// Package kyvernosim runs Kyverno ClusterPolicies through Kyverno's own engine (the CLI's policy processor) against
// an in-memory cluster, offline. The policy tester's preview and the policy engine tests share it.
package kyvernosim
