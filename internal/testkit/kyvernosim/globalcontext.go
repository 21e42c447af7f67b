package kyvernosim

import (
	"encoding/json"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/apis/v1alpha1"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/store"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// servicesCacheVariable is the key of the chart's configuration variable (vi_config) that names the GlobalContextEntry
// of Services the resolve rules read.
const servicesCacheVariable = "servicesCache"

// setGlobalContext gives st, for every GlobalContextEntry the policies name through their vi_config variable, the
// cluster's Services: what Kyverno's informer of Services holds on a cluster that has caught up.
func setGlobalContext(st *store.Store, policies []kyvernov1.PolicyInterface, c Cluster) error {
	names := servicesCacheNames(policies)
	if len(names) == 0 {
		return nil
	}
	var services []runtime.RawExtension
	for _, s := range c.services {
		raw, err := json.Marshal(s.Object)
		if err != nil {
			return err
		}
		services = append(services, runtime.RawExtension{Raw: raw})
	}
	var entries []v1alpha1.GlobalContextEntryValue
	for _, name := range names {
		// Never nil: an entry without resources is read as "no data", not as an empty list.
		entries = append(entries, v1alpha1.GlobalContextEntryValue{Name: name, Resources: append([]runtime.RawExtension{}, services...)})
	}
	st.SetGlobalContextEntries(entries)
	return nil
}

// servicesCacheNames reads the GlobalContextEntry names out of the policies' vi_config context variables.
func servicesCacheNames(policies []kyvernov1.PolicyInterface) []string {
	seen := map[string]bool{}
	var names []string
	for _, p := range policies {
		for _, rule := range p.GetSpec().Rules {
			for _, entry := range rule.Context {
				if entry.Variable == nil || entry.Variable.Value == nil {
					continue
				}
				config, _ := entry.Variable.Value.Value.(map[string]any)
				if name, ok := config[servicesCacheVariable].(string); ok && name != "" && !seen[name] {
					seen[name] = true
					names = append(names, name)
				}
			}
		}
	}
	return names
}

// WithServicesCache returns c with an informer of Services that holds services instead of the cluster's own: an
// informer that lags behind the API server.
func (c Cluster) WithServicesCache(services []*unstructured.Unstructured) Cluster {
	c.services = services
	return c
}
