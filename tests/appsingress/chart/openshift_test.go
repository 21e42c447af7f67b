package chart

import (
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/openshiftscc"
	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

// Every Pod (the operator, CoreDNS, HAProxy with their config sidecars, the helm test Pod) is admitted under
// restricted-v2 with global.openshift (CoreDNS keeps NET_BIND_SERVICE, which restricted-v2 allows), and runs as a
// numeric non-root user without it (curl's and HAProxy's images name their USER).
func TestOpenShiftSwitch(t *testing.T) { openshiftscc.CheckSwitch(t, chartDir) }

// The hostNetwork attachment mode cannot pass restricted-v2: it refuses exactly the Pods on the node's network (the
// node's network and, implied by it, host ports), which hostnetwork-v2 admits, as the README's "On OpenShift" says
// to grant their ServiceAccounts.
func TestHostNetworkNeedsHostNetworkV2(t *testing.T) {
	for _, c := range []struct {
		name   string
		values map[string]any
		pod    string
	}{
		{"dns", map[string]any{"dns": map[string]any{"hostNetwork": true, "vlanAddresses": []any{"10.1.0.5"}}}, "apps-ingress-operator-dns"},
		{"proxy", map[string]any{"proxy": map[string]any{"hostNetwork": true}}, "apps-ingress-operator-proxy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.values["global"] = openshiftscc.OpenShiftValues["global"]
			docs, err := render.Render(chartDir, nil, c.values)
			if err != nil {
				t.Fatal(err)
			}
			pods, err := openshiftscc.Pods(docs)
			if err != nil {
				t.Fatal(err)
			}
			refused := 0
			for _, p := range pods {
				_, err := openshiftscc.Admit(openshiftscc.RestrictedV2, openshiftscc.TestNamespace, p.Spec)
				if p.Object.GetName() != c.pod {
					if err != nil {
						t.Errorf("%s: %v", p, err)
					}
					continue
				}
				refused++
				if err == nil || !strings.Contains(err.Error(), "hostNetwork is not allowed") {
					t.Errorf("%s under restricted-v2: %v, want hostNetwork refused", p, err)
				}
				if _, err := openshiftscc.Admit(openshiftscc.HostNetworkV2, openshiftscc.TestNamespace, p.Spec); err != nil {
					t.Errorf("%s under hostnetwork-v2: %v", p, err)
				}
				if sa := p.Spec.ServiceAccountName; sa != c.pod+"-config" {
					t.Errorf("%s runs as ServiceAccount %q, not the %s-config the README names", p, sa, c.pod)
				}
			}
			if refused != 1 {
				t.Errorf("%d Pods named %s", refused, c.pod)
			}
		})
	}
}
