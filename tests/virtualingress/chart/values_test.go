// Package chart checks what the virtual-ingress chart decides at `helm install` / `helm upgrade` time: values it
// refuses because they would only fail later, when Kyverno writes an Ingress, and what it renders for which values.
package chart

import (
	"strings"
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/render"
)

const chartDir = "../../../charts/virtual-ingress"

func TestNameSuffixMustKeepIngressNamesValid(t *testing.T) {
	for suffix, ok := range map[string]bool{
		"":              true,
		"-generated":    true,
		"-gen.internal": true,
		".ingress":      true,
		"x":             true,
		"-":             false,
		"-generated-":   false,
		"-generated.":   false,
		".":             false,
		"-a..b":         false,
		"-a.-b":         false,
		"-Generated":    false,
	} {
		_, err := render.Manifest(chartDir, nil, map[string]any{"generatedIngress": map[string]any{"nameSuffix": suffix}})
		switch {
		case ok && err != nil:
			t.Errorf("nameSuffix %q refused: %v", suffix, err)
		case !ok && err == nil:
			t.Errorf("nameSuffix %q accepted; it makes invalid Ingress names", suffix)
		case !ok && !strings.Contains(err.Error(), "nameSuffix"):
			t.Errorf("nameSuffix %q: the error does not name the value: %v", suffix, err)
		}
	}
}
