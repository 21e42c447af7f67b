// Package kyvernosim runs the chart's Kyverno policies through Kyverno's own engines, offline, against an in-memory
// cluster: ClusterPolicies through the CLI's policy processor, and the CEL policies (MutatingPolicy, GeneratingPolicy)
// through the CLI's CEL engines. The policy tester's preview and compare, and the Service-event tests, share it.
package kyvernosim
