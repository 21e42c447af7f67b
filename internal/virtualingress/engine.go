package virtualingress

// The chart's policy engines, as its value policy.engine names them (besides "auto", which picks one of them).
const (
	// EngineClusterPolicy renders kyverno.io/v1 ClusterPolicies.
	EngineClusterPolicy = "clusterPolicy"
	// EngineGeneratingPolicy renders policies.kyverno.io/v1 MutatingPolicies and a GeneratingPolicy (CEL).
	EngineGeneratingPolicy = "generatingPolicy"
)

// Engines are both engines.
var Engines = []string{EngineClusterPolicy, EngineGeneratingPolicy}

// PolicySelector selects the Kyverno policies the chart renders, whichever the engine (its standard part-of label).
const PolicySelector = "app.kubernetes.io/part-of=virtual-ingress"
