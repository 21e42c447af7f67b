package chart

import (
	"testing"

	"github.com/virtual-ingress/virtual-ingress/internal/testkit/openshiftscc"
)

// Every Pod, helm test Pods included, is admitted under restricted-v2 with global.openshift, and runs as a numeric
// non-root user without it.
func TestOpenShiftSwitch(t *testing.T) { openshiftscc.CheckSwitch(t, chartDir) }
