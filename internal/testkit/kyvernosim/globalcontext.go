package kyvernosim

import (
	"encoding/json"

	kyvernov1 "github.com/kyverno/kyverno/api/kyverno/v1"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/apis/v1alpha1"
	"github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno/store"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The keys of the chart's configuration variable (vi_config) that name its GlobalContextEntries: Kyverno's informers
// of Services and of VirtualIngresses.
const (
	servicesCacheVariable         = "servicesCache"
	virtualIngressesCacheVariable = "virtualIngressesCache"
)

// setGlobalContext gives st, for every GlobalContextEntry the policies name through their vi_config variable, what
// Kyverno's informer holds on a cluster that has caught up: the cluster's Services (or those WithServicesCache gave),
// and its VirtualIngresses.
func setGlobalContext(st *store.Store, policies []kyvernov1.PolicyInterface, c Cluster) error {
	var entries []v1alpha1.GlobalContextEntryValue
	for variable, objects := range map[string][]*unstructured.Unstructured{
		servicesCacheVariable:         c.services,
		virtualIngressesCacheVariable: c.virtualIngresses,
	} {
		// Never nil: an entry without resources is read as "no data", not as an empty list.
		raws := []runtime.RawExtension{}
		for _, o := range objects {
			raw, err := json.Marshal(o.Object)
			if err != nil {
				return err
			}
			raws = append(raws, runtime.RawExtension{Raw: raw})
		}
		for _, name := range configuredNames(policies, variable) {
			entries = append(entries, v1alpha1.GlobalContextEntryValue{Name: name, Resources: raws})
		}
	}
	if len(entries) > 0 {
		st.SetGlobalContextEntries(entries)
	}
	return nil
}

// configuredNames reads the values of one key out of the policies' vi_config context variables.
func configuredNames(policies []kyvernov1.PolicyInterface, key string) []string {
	seen := map[string]bool{}
	var names []string
	for _, p := range policies {
		for _, rule := range p.GetSpec().Rules {
			for _, entry := range rule.Context {
				if entry.Variable == nil || entry.Variable.Value == nil {
					continue
				}
				config, _ := entry.Variable.Value.Value.(map[string]any)
				if name, ok := config[key].(string); ok && name != "" && !seen[name] {
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

// WithVirtualIngressesCache returns c with an informer of VirtualIngresses that holds virtualIngresses instead of the
// cluster's own: an informer that has not seen the latest ones yet.
func (c Cluster) WithVirtualIngressesCache(virtualIngresses []*unstructured.Unstructured) Cluster {
	c.virtualIngresses = virtualIngresses
	return c
}
