package controller

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// serviceIndex indexes VirtualIngresses (and VirtualHTTPRoutes, whose status.backends has the same shape) by what makes
// a Service event concern them, so that a Service event reads the few it concerns from the cache instead of every one
// of its namespace. A selector
// is indexed under one of its pairs (the first key in order): a Service it matches carries that pair, so looking up
// each of the Service's labels finds it. A backend's Service name is indexed too (a Stale backend keeps a name its
// selector no longer matches).
const serviceIndex = "virtualingress.serviceKeys"

func labelKey(k, v string) string   { return "label:" + k + "=" + v }
func serviceKey(name string) string { return "service:" + name }

// serviceKeys is the index function of the kind.
func (k *sourceKind) serviceKeys(obj client.Object) []string {
	v, err := k.read(obj)
	if err != nil {
		return nil
	}
	return keysOf(v.backends)
}

func keysOf(backends []backend) []string {
	var keys []string
	for _, b := range backends {
		if b.Service != "" {
			keys = append(keys, serviceKey(b.Service))
		}
		if len(b.MatchLabels) > 0 {
			names := make([]string, 0, len(b.MatchLabels))
			for k := range b.MatchLabels {
				names = append(names, k)
			}
			sort.Strings(names)
			keys = append(keys, labelKey(names[0], b.MatchLabels[names[0]]))
		}
	}
	return keys
}

// service: the objects of the mapper's kind in its namespace that select it or name it in status. controller-runtime calls it with
// the old and the new object of an update, so a relabelled Service reaches the VirtualIngresses of both.
func (m mapper) service(ctx context.Context, obj client.Object) []reconcile.Request {
	keys := []string{serviceKey(obj.GetName())}
	for k, v := range obj.GetLabels() {
		keys = append(keys, labelKey(k, v))
	}
	seen := map[string]bool{}
	var out []reconcile.Request
	for _, key := range keys {
		list := m.kind.newSourceList()
		if err := m.client.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingFields{serviceIndex: key}); err != nil {
			continue
		}
		for i := range list.Items {
			name := list.Items[i].GetName()
			if seen[name] {
				continue
			}
			if v, err := m.kind.read(&list.Items[i]); err != nil || !concerns(v.backends, obj) {
				continue
			}
			seen[name] = true
			out = append(out, request(obj.GetNamespace(), name))
		}
	}
	return out
}

// concerns tells whether one of the backends names the Service or selects it.
func concerns(backends []backend, svc client.Object) bool {
	for _, b := range backends {
		if b.Service == svc.GetName() || (len(b.MatchLabels) > 0 && labels.SelectorFromSet(b.MatchLabels).Matches(labels.Set(svc.GetLabels()))) {
			return true
		}
	}
	return false
}
