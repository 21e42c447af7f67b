package openshiftscc

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

// TestNamespace is the namespace charts are admitted into: a block as OpenShift hands them out, far from 65532.
var TestNamespace = NewNamespace(render.Namespace, 1000680000, 10000)

// CheckChart renders chartDir in every values case it is tested with (render.Cases), extra merged on top, and fails
// t for every Pod (Deployments, DaemonSets, Jobs, helm test Pods ...) that scc refuses in TestNamespace or that does
// not itself declare what a restricted Pod must (Declared). It returns the Pods checked, by case, as admitted.
func CheckChart(t testing.TB, chartDir string, extra map[string]any, scc SCC) map[string][]Pod {
	t.Helper()
	cases, err := render.Cases(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[string][]Pod{}
	for _, name := range names {
		docs, err := render.Render(chartDir, cases[name], extra)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pods, err := Pods(docs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(pods) == 0 {
			t.Fatalf("%s: no Pods rendered", name)
		}
		for _, p := range pods {
			if err := Declared(p.Spec); err != nil {
				t.Errorf("%s: %s: %v", name, p, err)
			}
			admitted, err := Admit(scc, TestNamespace, p.Spec)
			if err != nil {
				t.Errorf("%s: %s: %v", name, p, err)
			}
			out[name] = append(out[name], Pod{Object: p.Object, Spec: admitted})
		}
	}
	return out
}

// Declared fails unless the Pod asks for what restricted-v2 would otherwise impose, so that it runs the same under
// Pod Security "restricted" without an SCC: RuntimeDefault seccomp, runAsNonRoot, and in every container no
// privilege escalation and every capability dropped (NET_BIND_SERVICE may be added back).
func Declared(spec corev1.PodSpec) error {
	var errs []error
	psc := spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	podSeccomp := psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
	podNonRoot := psc.RunAsNonRoot != nil && *psc.RunAsNonRoot
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		if !podSeccomp && (sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault) {
			errs = append(errs, fmt.Errorf("container %s: no RuntimeDefault seccomp profile", c.Name))
		}
		if !podNonRoot && (sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot) {
			errs = append(errs, fmt.Errorf("container %s: runAsNonRoot not set", c.Name))
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			errs = append(errs, fmt.Errorf("container %s: allowPrivilegeEscalation not false", c.Name))
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			errs = append(errs, fmt.Errorf("container %s: capabilities not all dropped", c.Name))
		}
	}
	return errors.Join(errs...)
}

// CheckNumericUsers renders chartDir in every values case with extra merged on top and fails t for every container
// that would run without a numeric UID of its own: on Kubernetes without an SCC, the kubelet can check runAsNonRoot
// only against a number, and images such as curl's and HAProxy's name their USER.
func CheckNumericUsers(t testing.TB, chartDir string, extra map[string]any) {
	t.Helper()
	cases, err := render.Cases(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for name, files := range cases {
		docs, err := render.Render(chartDir, files, extra)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pods, err := Pods(docs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range pods {
			for _, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
				uid := (*int64)(nil)
				if p.Spec.SecurityContext != nil {
					uid = p.Spec.SecurityContext.RunAsUser
				}
				if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
					uid = c.SecurityContext.RunAsUser
				}
				if uid == nil || *uid == 0 {
					t.Errorf("%s: %s container %s: no non-root numeric runAsUser", name, p, c.Name)
				}
			}
		}
	}
}

// OpenShiftValues turn a chart's OpenShift switch on.
var OpenShiftValues = map[string]any{"global": map[string]any{"openshift": true}}

// CheckSwitch is what every chart here promises about global.openshift: with it, every Pod of every values case is
// admitted under restricted-v2 (CheckChart); without it, every container has a numeric non-root UID
// (CheckNumericUsers).
func CheckSwitch(t *testing.T, chartDir string) {
	t.Run("global.openshift under restricted-v2", func(t *testing.T) {
		CheckChart(t, chartDir, OpenShiftValues, RestrictedV2)
	})
	t.Run("numeric users without it", func(t *testing.T) { CheckNumericUsers(t, chartDir, nil) })
}
