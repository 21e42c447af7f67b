// Package policyengine names the virtual-ingress chart's policy engines and the label that selects the policies it renders.
// The chart (charts/virtual-ingress) is the source of truth; the tester, the benchmark and the tests share these names.
package policyengine

// The chart's policy engines, as its value policy.engine names them (besides "auto", which picks one of them).
const (
	// ClusterPolicy renders kyverno.io/v1 ClusterPolicies.
	ClusterPolicy = "clusterPolicy"
	// GeneratingPolicy renders policies.kyverno.io/v1 MutatingPolicies and a GeneratingPolicy (CEL).
	GeneratingPolicy = "generatingPolicy"
)

// All are both engines, in the order the tests run them.
var All = []string{ClusterPolicy, GeneratingPolicy}

// PolicySelector selects the Kyverno policies the chart renders, whichever the engine (its standard part-of label).
const PolicySelector = "app.kubernetes.io/part-of=virtual-ingress"
